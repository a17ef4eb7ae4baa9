// Reading wanted orders from one GET /orders/ listing: an order the listing returns in a shape
// the app cannot read is one that could not be read, never one the gateway does not have, and
// it is not looked up one by one (GET /orders/info would answer the same shape).
import { describe, expect, it } from "vitest";
import { createGatewayClient } from "../../app/gateway/client";
import type { ShopGatewayAccess } from "../../app/payments/deps";
import { readGatewayOrders, readWantedOrders } from "../../app/payments/read-orders";
import { fixtureJson } from "../gateway/support/fixtures";

const documented = fixtureJson<{ body: Record<string, unknown>[] }>("orders-info.response.docs-b4bit.json").body[0]!;
const READABLE = "1040095a-737d-41a2-a2e1-d031d19ec8cd";
const UNREADABLE = "5f2b8c1e-3d4a-4b6c-8e9f-0a1b2c3d4e5f";
const UNLISTED = "0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e";
const now = new Date("2026-04-17T12:00:00Z");

/** A gateway whose listing holds one readable order and one it cannot read (an unknown fiat); GET /orders/info knows neither of the others. */
function gateway() {
  const paths: string[] = [];
  const answer = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
  const client = createGatewayClient({
    baseUrl: "https://gateway.example/api/v1",
    deviceKey: "6c9bb3c5-7d3a-4f1e-9b2a-1f0c8d7e6a5b",
    retry: { maxAttempts: 1 },
    fetch: async (input) => {
      const path = new URL(input instanceof Request ? input.url : String(input)).pathname;
      paths.push(path);
      if (path === "/api/v1/orders/") return answer(200, [documented, { ...documented, identifier: UNREADABLE, fiat: "XYZ" }]);
      return answer(404, { detail: "Not found." });
    },
  });
  const access: ShopGatewayAccess = { env: "sandbox", client, secretKeyHex: "00", deviceKeyHash: "device" };
  return { access, paths };
}

const wanted = [READABLE, UNREADABLE, UNLISTED].map((gatewayOrderId) => ({ gatewayOrderId, createdAt: new Date("2026-04-17T10:00:00Z") }));

describe("reading wanted orders from a listing", () => {
  it("reads the others, counts the unreadable one as not read (not gone), and spends no look-up on it", async () => {
    const { access, paths } = gateway();
    const read = (
      await readWantedOrders(access, wanted, now, { candidates: [UNREADABLE, UNLISTED], limit: 5, affordable: () => Promise.resolve(true) })
    )._unsafeUnwrap();
    expect([...read.orders.keys()]).toEqual([READABLE]);
    expect([...read.unreadable]).toEqual([UNREADABLE]);
    expect([...read.gone]).toEqual([UNLISTED]);
    expect(read.failedLookUp).toBeNull();
    expect(read.lookUps).toBe(1);
    expect(paths).toEqual(["/api/v1/orders/", `/api/v1/orders/info/${UNLISTED}`]);
  });

  it("a webhook's read gets the readable orders of the listing, and no answer for the unreadable one", async () => {
    const { access } = gateway();
    const orders = (await readGatewayOrders(access, wanted.slice(0, 2), now))._unsafeUnwrap();
    expect([...orders.keys()]).toEqual([READABLE]);
  });
});
