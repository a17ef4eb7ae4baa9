// An inbox pass claims up to 100 webhooks of several shops at once (CLAIM_MS, 30 s) and
// processes them shop by shop. While one shop's gateway read waits (a slow or throttled
// gateway: the client alone may retry a read for 30 s), the claims of the webhooks of the shops
// after it run out, and another instance's pass claims and processes them. The first pass must
// then leave them alone: processing them again reads their orders a second time, spending the
// devices' quota exactly when the gateway is slow.
import { randomBytes, randomUUID } from "node:crypto";
import { err } from "neverthrow";
import { beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import { GatewayNotFoundError } from "../../app/gateway/errors";
import { signWebhook } from "../../app/gateway/webhook-signature";
import type { PaymentsDeps } from "../../app/payments/deps";
import { receiveGatewayWebhook } from "../../app/payments/gateway-webhooks";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import type { AppServices } from "../../app/services.server";
import { storeCredentials } from "../../app/shops/shop-credentials.server";
import { anotherShop, createPayment, ROW_DATABASES, rowsDatabaseForFile, servicesOverRows } from "../support/row-databases";

const SHOP_A = "lost-claim-a.myshopify.com";
const TOKEN_A = "lost-claim-token-a-000001";
const SHOP_B = "lost-claim-b.myshopify.com";
const TOKEN_B = "lost-claim-token-b-000001";

// The app's clock (every instance's); whole seconds, as nonces are.
const clock = { at: new Date(Math.floor(Date.now() / 1000) * 1000), now: (): Date => clock.at };

const newDevice = () => ({ deviceKey: randomUUID(), secretKeyHex: randomBytes(32).toString("hex") });

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: SHOP_A, webhookToken: TOKEN_A });
  let db: Database;
  let services: AppServices;
  let shopA: string;
  let shopB: string;

  beforeAll(async () => {
    ({ db, shopId: shopA } = rows());
    services = servicesOverRows(rows(), { clock });
    shopB = await anotherShop(rows(), { shopDomain: SHOP_B, webhookToken: TOKEN_B }, clock.now());
  });

  it("a pass does not process again the webhooks whose claims ran out while it waited on another shop's read, and that another pass processed meanwhile", async () => {
    const deviceA = newDevice();
    const deviceB = newDevice();
    await storeCredentials(db, services.cipher, await db.shop.findUniqueOrThrow({ where: { id: shopA } }), "sandbox", deviceA);
    await storeCredentials(db, services.cipher, await db.shop.findUniqueOrThrow({ where: { id: shopB } }), "sandbox", deviceB);
    const ofA = await createPayment({ ...rows(), shopId: shopA }, { gatewayOrderId: randomUUID(), createdAt: clock.now() });
    const ofB = await createPayment({ ...rows(), shopId: shopB }, { gatewayOrderId: randomUUID(), createdAt: clock.now() });

    // A completed status without the order's amount: only a trigger, so each is read.
    const notify = async (token: string, secretHex: string, orderId: string) => {
      const body = `{"identifier": "${orderId}", "status": "CO"}`;
      const nonce = String(clock.now().getTime() / 1000);
      const answer = await receiveGatewayWebhook(services, { token, rawBody: new TextEncoder().encode(body), nonce, signature: signWebhook({ secretHex, nonce, rawBody: body }), maxNonceAgeSeconds: 20 });
      expect(answer.status).toBe(200);
    };
    await notify(TOKEN_A, deviceA.secretKeyHex, ofA.gatewayOrderId!);
    clock.at = new Date(clock.at.getTime() + 1000);
    await notify(TOKEN_B, deviceB.secretKeyHex, ofB.gatewayOrderId!);

    // Every read of an order, by identifier. Shop A's first read is slow: 31 s go by, and in the
    // meantime another instance's pass runs.
    const reads: string[] = [];
    let slowed = false;
    let other: Promise<unknown> = Promise.resolve();
    const deps: PaymentsDeps = {
      ...services,
      gateways: {
        ...services.gateways,
        forShop: (row, env) => {
          const access = services.gateways.forShop(row, env);
          if (!access) return access;
          const orderInfo: typeof access.client.orderInfo = async (identifier) => {
            reads.push(identifier);
            if (identifier === ofA.gatewayOrderId && !slowed) {
              slowed = true;
              clock.at = new Date(clock.at.getTime() + 31_000);
              other = processWebhookInbox(deps, { worker: "other-instance" });
              await other;
            }
            return err(new GatewayNotFoundError(null));
          };
          return { ...access, client: { ...access.client, orderInfo } };
        },
      },
    };

    await processWebhookInbox(deps, { worker: "slow-instance" });
    await other;

    // Both webhooks were processed, once each.
    const hooks = await db.gatewayWebhook.findMany({ where: { processedAt: null } });
    expect(hooks).toHaveLength(0);
    // Shop B's order is read once: by the pass that held its webhook, not again by the pass that lost it.
    expect(reads.filter((id) => id === ofB.gatewayOrderId)).toHaveLength(1);
  });
});
