// A 404 on a read is "no such order" only when it is the gateway's own answer (DRF's
// {"detail": ...}, FACTS.md); SPEC.md's 404 also means "Unknown route". A 404 page of a proxy,
// CDN or ingress in front of the gateway (nginx's, a deploy rerouting) says nothing of the
// order: it is a failed read, retried. Read as "gone", it flagged every payment paid by a signed
// webhook and awaiting verification as webhook_mismatch ("the gateway does not return this
// order any more"), stopped verifying it, and closed payments near Shopify's deadline as gone.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createGatewayClient } from "../../app/gateway/client";
import { createLogger } from "../../app/lib/logger.server";
import type { GatewayDirectory, PaymentsDeps, ShopGatewayAccess } from "../../app/payments/deps";
import { reconcileOnce } from "../../app/payments/reconcile";
import { raw, startScriptedServer, type ScriptedServer } from "../gateway/support/scripted-server";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES, rowsDatabaseForFile, type OpenedRows } from "../support/row-databases";

const DEVICE_KEY = "6c9bb3c5-7d3a-4f1e-9b2a-1f0c8d7e6a5b";
const NGINX_404 = "<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer();
});
afterAll(async () => {
  await server.close();
});

function htmlNotFoundClient() {
  for (let i = 0; i < 20; i++) server.script(raw(404, NGINX_404, { "Content-Type": "text/html" }));
  return createGatewayClient({ baseUrl: `${server.origin}/api/v1`, deviceKey: DEVICE_KEY, timeoutMs: 2_000, retry: { maxAttempts: 1 }, sleep: async () => {} });
}

describe("an HTML 404 page in front of the gateway", () => {
  it("GET /orders/info answered by an HTML 404 page is not read as 'no such order'", async () => {
    const result = await htmlNotFoundClient().orderInfo(randomUUID());
    // A failed read (retried), not the gateway saying the order does not exist for this device.
    expect(result._unsafeUnwrapErr().kind).toBe("server_error");
  });

  describe("in the reconciler", () => {
    const rows = rowsDatabaseForFile(ROW_DATABASES[0]!, { shopDomain: "html-404.myshopify.com", webhookToken: "html-404-token-000000001" });
    let opened: OpenedRows;
    beforeAll(() => void (opened = rows()));

    it("does not flag a payment paid by a signed webhook as 'gone from the gateway' and stop verifying it", async () => {
      const now = Date.now();
      const paid = await opened.db.payment.create({
        data: paymentColumns(opened.shopId, {
          state: "paid",
          gatewayOrderId: randomUUID(),
          gatewayStatus: "CO",
          unverifiedSince: new Date(now - 2 * 3_600_000),
          createdAt: new Date(now - 2 * 3_600_000),
        }),
      });
      const access: ShopGatewayAccess = { env: "sandbox", client: htmlNotFoundClient(), secretKeyHex: "00".repeat(32), deviceKeyHash: "device" };
      const gateways: GatewayDirectory = { forShop: (_shop, env) => (env === "sandbox" ? access : null), retiredFor: () => null, currencies: async () => null };
      const deps = { db: opened.db, sql: opened.sql, clock: { now: () => new Date(now) }, logger: createLogger({ level: "debug", sink: () => {} }), gateways } as unknown as PaymentsDeps;

      await reconcileOnce(deps, { worker: "html-404", force: true });

      const after = await opened.db.payment.findUniqueOrThrow({ where: { id: paid.id } });
      // Actual: attention "webhook_mismatch" ("the gateway does not return this order any more")
      // and unverifiedSince null: a false alarm, and the payment is never verified afterwards.
      expect({ attention: after.attention, unverified: after.unverifiedSince !== null }).toEqual({ attention: null, unverified: true });
    });
  });
});
