// A return's read of the shop's orders makes no look-ups and leaves payments near the end of
// Shopify's window to the reconciler: a paid payment whose order was made through the
// merchant's previous device (left out of the current device's listing, readable by its
// identifier) is looked up and resolved by the reconciler while shoppers keep returning, never
// rejected as "could not be read".
import { expect, it } from "vitest";
import { connectGateway, notificationUrl } from "../../app/shops/onboarding.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { FINALISE_AFTER_MS, FINALISE_UNREAD_AFTER_MS, reconcileOnce } from "../../app/payments/reconcile";
import { PAID_IN_FULL, paymentThrough, setWebhookFaults, stackForFile } from "../support/stack";

let offsetMs = 0;
const clock = { now: () => new Date(Date.now() + offsetMs) };
const stack = stackForFile({ workers: false, clock, gatewayRetry: { baseDelayMs: 5, maxDelayMs: 20 } });
const db = () => stack().services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
const deviceKey = (shop: Awaited<ReturnType<typeof shopRow>>) => stack().services.cipher.decrypt(shop.sandboxDeviceKeyEnc!, credentialContext(shop.id, "sandbox", "device-key"));

async function advance(ms: number): Promise<void> {
  offsetMs += ms;
  const clockNow = (await stack().sandboxControl("/sandbox/clock", undefined, "GET")) as { offset_seconds: number };
  const behind = offsetMs / 1000 - clockNow.offset_seconds;
  if (behind > 0) await stack().sandboxControl("/sandbox/clock", { advance_seconds: behind });
}

async function connectAnotherDevice(): Promise<void> {
  const shop = await shopRow();
  const response = await fetch(`${stack().sandbox.baseUrl}/device/`, {
    method: "POST",
    headers: { "X-Device-Id": deviceKey(shop), "content-type": "application/json" },
    body: JSON.stringify({ name: "Another device" }),
  });
  const { identifier: newKey } = (await response.json()) as { identifier: string };
  const device = (await stack().sandboxControl(`/sandbox/devices/${newKey}/settings`, { regenerate_secret: true, notification_url: notificationUrl(stack().app.url, shop) })) as { secret_key: string };
  const connected = await connectGateway(stack().services, stack().shopDomain, { env: "sandbox", deviceKey: newKey, secretKeyHex: device.secret_key });
  expect(connected.ok).toBe(true);
}

it("a paid order of the previous device is not rejected unread while shoppers keep returning near the end of the window", async () => {
  await setWebhookFaults(stack(), "drop");
  // Paid in full through the previous device; its webhooks lost.
  const old = await paymentThrough(stack(), PAID_IN_FULL);
  await connectAnotherDevice();
  await setWebhookFaults(stack(), "drop");
  await advance(FINALISE_AFTER_MS + 30_000);

  // Shoppers of the new device whose webhooks were lost return every 8 minutes; the reconciler
  // runs between the returns.
  const summaries: unknown[] = [];
  while (offsetMs < FINALISE_UNREAD_AFTER_MS + 5 * 60_000) {
    const shopper = await paymentThrough(stack(), PAID_IN_FULL);
    const back = await fetch(stack().services.links.returnUrl(shopper.payment, "ok"), { redirect: "manual" });
    await back.text();
    await advance(4 * 60_000);
    const { gatewayCalls, finalised } = await reconcileOnce(stack().services, { worker: "t" });
    summaries.push({ gatewayCalls, finalised });
    await advance(4 * 60_000);
  }
  const row = await db().payment.findUniqueOrThrow({ where: { id: old.payment.id } });
  expect(row).toMatchObject({ state: "paid", gatewayStatus: "CO" });
}, 180_000);
