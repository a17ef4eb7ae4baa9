// Reads the gateway example files kept under test/fixtures/gateway/.

import { readFileSync } from "node:fs";
import { parseGatewayJson } from "../../../app/gateway/json-numbers";
import { orderInfoResponseSchema, type GatewayOrder } from "../../../app/gateway/schemas";
import { parseGatewayStatus } from "../../../app/gateway/statuses";

export function fixtureText(name: string): string {
  return readFileSync(new URL(`../../fixtures/gateway/${name}`, import.meta.url), "utf8");
}

/** The example's `body`, read so that numbers keep their exact text. */
export function fixtureBody(name: string): unknown {
  const parsed = parseGatewayJson(fixtureText(name)) as { body: unknown };
  return parsed.body;
}

/** The example's `body`, read with plain JSON.parse (numbers become floats). */
export function fixtureBodyPlain(name: string): unknown {
  return (JSON.parse(fixtureText(name)) as { body: unknown }).body;
}

export function fixtureJson<T>(name: string): T {
  return JSON.parse(fixtureText(name)) as T;
}

/**
 * The documented order (GET /orders/info), as the app reads it, with this identifier, status
 * and number of transactions; for a payment's fiat and amount when `terms` gives them (a
 * payment's row does), the documented 125.02 MXN otherwise.
 */
export function documentedOrder(identifier: string, status: string, transactions: number, editedAt: string, terms?: { amount: string; currency: string }): GatewayOrder {
  const documented = orderInfoResponseSchema.parse(fixtureBody("orders-info.response.docs-b4bit.json"));
  const transaction = documented.transactions[0]!;
  return {
    ...documented,
    identifier,
    status: parseGatewayStatus(status),
    edited_at: editedAt,
    ...(terms ? { fiat_amount: terms.amount, fiat: terms.currency } : {}),
    transactions: Array.from({ length: transactions }, (_, i) => ({ ...transaction, tx_hash: `${identifier}-${i}` })),
  } as GatewayOrder;
}
