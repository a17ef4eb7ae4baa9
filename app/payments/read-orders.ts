// Reads gateway orders authoritatively with as few calls as the quota deserves: one order
// by GET /orders/info, several by one GET /orders/ over the dates that cover them.
import { err, ok, type Result } from "neverthrow";
import type { GatewayError } from "~/gateway/errors";
import type { GatewayOrder } from "~/gateway/schemas";
import type { ShopGatewayAccess } from "./deps";

const DAY_MS = 86_400_000;

export async function readGatewayOrders(
  access: ShopGatewayAccess,
  wanted: readonly { gatewayOrderId: string; createdAt: Date }[],
  now: Date,
): Promise<Result<Map<string, GatewayOrder>, GatewayError>> {
  const found = new Map<string, GatewayOrder>();
  if (wanted.length === 0) return ok(found);
  if (wanted.length === 1) {
    const only = wanted[0]!;
    const info = await access.client.orderInfo(only.gatewayOrderId);
    if (info.isErr()) return info.error.kind === "not_found" ? ok(found) : err(info.error);
    found.set(info.value.identifier, info.value);
    return ok(found);
  }
  const earliest = Math.min(...wanted.map((w) => w.createdAt.getTime()));
  // A day of margin on both sides: the gateway dates orders in UTC, ours may straddle midnight.
  const listed = await access.client.listOrders({ start: new Date(earliest - DAY_MS), end: new Date(now.getTime() + DAY_MS) });
  if (listed.isErr()) return err(listed.error);
  const ids = new Set(wanted.map((w) => w.gatewayOrderId));
  for (const order of listed.value) if (ids.has(order.identifier)) found.set(order.identifier, order);
  return ok(found);
}
