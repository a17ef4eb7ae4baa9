// Owns the gateway's payment status codes: what each one means, which ones are
// final, and how a code read from the service is parsed. An unknown code is
// kept as-is and flagged, never dropped and never mistaken for a paid order.

export const GATEWAY_STATUSES = ["NR", "PE", "AC", "IA", "CO", "CA", "EX", "OC", "FA", "DE", "CM"] as const;

export type GatewayStatus = (typeof GATEWAY_STATUSES)[number];

export interface GatewayStatusInfo {
  code: GatewayStatus;
  name: string;
  meaning: string;
  final: boolean;
}

export const gatewayStatusInfo: { readonly [S in GatewayStatus]: GatewayStatusInfo & { code: S } } = {
  NR: { code: "NR", name: "Not Ready", meaning: "Created without input_currency; the customer has not chosen a currency yet.", final: false },
  PE: { code: "PE", name: "Pending", meaning: "Waiting for payment.", final: false },
  AC: { code: "AC", name: "Awaiting Completion", meaning: "Payment seen, waiting for confirmation; safe=true means one confirmation.", final: false },
  IA: { code: "IA", name: "Insufficient Amount", meaning: "Received less than expected.", final: true },
  CO: { code: "CO", name: "Completed", meaning: "Confirmed on-chain; an overpayment also ends here.", final: true },
  CA: { code: "CA", name: "Cancelled", meaning: "Unpaid for more than 24 hours.", final: true },
  EX: { code: "EX", name: "Expired", meaning: "Nothing received within the 15-60 minute window.", final: true },
  OC: { code: "OC", name: "Out of Condition", meaning: "Received, but the price moved and it no longer covers the order.", final: true },
  FA: { code: "FA", name: "Failed", meaning: "Transaction unconfirmed or rejected.", final: true },
  DE: { code: "DE", name: "Deleted", meaning: "Order deleted.", final: true },
  CM: { code: "CM", name: "Completed by Merchant", meaning: "Marked paid by the merchant in the dashboard.", final: true },
};

/** Whether a code (a stored one may be null: never read yet) is a status this project knows. */
export function isGatewayStatus(code: string | null): code is GatewayStatus {
  return code !== null && Object.hasOwn(gatewayStatusInfo, code);
}

export function isFinalGatewayStatus(status: GatewayStatus): boolean {
  return gatewayStatusInfo[status].final;
}

/**
 * A status as read from the service. `known: false` carries a code this
 * project does not know (e.g. an undocumented "RF"): callers must leave such an
 * order for a person rather than guess what it means.
 */
export type ParsedGatewayStatus =
  | { known: true; code: GatewayStatus; info: GatewayStatusInfo }
  | { known: false; code: string };

export function parseGatewayStatus(code: string): ParsedGatewayStatus {
  if (isGatewayStatus(code)) {
    return { known: true, code, info: gatewayStatusInfo[code] };
  }
  return { known: false, code };
}
