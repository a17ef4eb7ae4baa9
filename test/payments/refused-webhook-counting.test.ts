// Refused notifications of a known shop are counted for its health page per reason and minute:
// anyone who knows a shop's notification URL can send it forged or stale requests at will, and
// each used to add a row and a log line. On SQLite and PostgreSQL.
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { shopHealth } from "../../app/admin/health.server";
import { signWebhook } from "../../app/gateway/webhook-signature";
import type { Logger } from "../../app/lib/logger.server";
import { receiveGatewayWebhook } from "../../app/payments/gateway-webhooks";
import type { AppServices } from "../../app/services.server";
import { storeCredentials } from "../../app/shops/shop-credentials.server";
import { ROW_DATABASES, rowsDatabaseForFile, servicesOverRows } from "../support/row-databases";
import { refusalsCounted } from "../support/refusals";

const TOKEN = "refusal-count-token-0001";
const clock = { at: new Date("2026-11-30T10:00:05Z"), now: (): Date => clock.at };
const later = (ms: number) => void (clock.at = new Date(clock.at.getTime() + ms));

describe.each(ROW_DATABASES)("on $name", (database) => {
  const rows = rowsDatabaseForFile(database, { shopDomain: "refusal-count.myshopify.com", webhookToken: TOKEN });
  const said: { level: string; message: string }[] = [];
  let services: AppServices;
  let secretHex: string;

  beforeAll(async () => {
    const opened = rows();
    const record = (level: string) => (message: string) => void said.push({ level, message });
    const logger: Logger = { debug: record("debug"), info: record("info"), warn: record("warn"), error: record("error") } as Logger;
    services = { ...servicesOverRows(opened, { clock }), logger };
    secretHex = randomBytes(32).toString("hex");
    const shop = await opened.db.shop.findUniqueOrThrow({ where: { id: opened.shopId } });
    await storeCredentials(opened.db, services.cipher, shop, "sandbox", { deviceKey: randomUUID(), secretKeyHex: secretHex });
  });

  const send = (signedWith: string, nonceAgeSeconds = 0) => {
    const rawBody = new TextEncoder().encode(JSON.stringify({ identifier: randomUUID(), status: "CO", fiat_amount: 49.9 }));
    const nonce = String(Math.floor(clock.now().getTime() / 1000) - nonceAgeSeconds);
    return receiveGatewayWebhook(services, { token: TOKEN, rawBody, nonce, signature: signWebhook({ secretHex: signedWith, nonce, rawBody }), maxNonceAgeSeconds: 20 });
  };

  it("counts 300 forged requests of one minute in one row, says so once, and the health page shows all of them", async () => {
    const { db, shopId } = rows();
    const forger = randomBytes(32).toString("hex");
    for (let i = 0; i < 300; i++) expect(await send(forger)).toEqual({ status: 401, reason: "bad_signature" });
    for (let i = 0; i < 20; i++) expect(await send(secretHex, 3_600)).toMatchObject({ status: 401, reason: "stale_nonce" });
    expect(await db.rejectedWebhook.count({ where: { shopId } })).toBe(2);
    expect(await refusalsCounted(db, { shopId, reason: "bad_signature" })).toBe(300);
    expect(said.filter((line) => line.level === "warn")).toHaveLength(2);

    // The next minute starts a row of its own.
    later(60_000);
    for (let i = 0; i < 5; i++) await send(forger);
    expect(await db.rejectedWebhook.count({ where: { shopId } })).toBe(3);
    expect(said.filter((line) => line.level === "warn")).toHaveLength(3);

    const health = await shopHealth(services, await db.shop.findUniqueOrThrow({ where: { id: shopId } }));
    expect(health.rejected.map(({ reason, count }) => ({ reason, count }))).toEqual([
      { reason: "bad_signature", count: 305 },
      { reason: "stale_nonce", count: 20 },
    ]);
    // Refused at once, each is counted once, in however many rows the first of a minute took.
    later(60_000);
    await Promise.all(Array.from({ length: 12 }, () => send(forger)));
    for (let i = 0; i < 8; i++) await send(forger);
    expect(await refusalsCounted(db, { shopId, reason: "bad_signature" })).toBe(325);
    // A notification signed with the shop's key still gets through.
    expect(await send(secretHex)).toMatchObject({ status: 200 });
  });
});
