// A shop's expiring offline token over a quiet spell. The app asks Shopify for expiring
// offline tokens (app/shopify.server.ts): an access token lasts an hour and comes with a
// refresh token Shopify honours for 90 days. Renewed only when a call to Shopify needs it, the
// pair of a shop whose shoppers rarely pay in crypto, and whose merchant does not open the
// app, ran out: the first payment after 90 quiet days could not be resolved (invalid_grant)
// although the shopper had paid. The readiness pass renews a pair 30 days before its refresh
// token runs out, once, so the payment reaches Shopify without the merchant's help.
import { expect, it } from "vitest";
import { deliverDueMessages } from "../../app/payments/outbox";
import { processWebhookInbox } from "../../app/payments/process-webhooks";
import { reconcileOnce } from "../../app/payments/reconcile";
import { purgeExpiredRows } from "../../app/payments/retention";
import { keepOfflineTokensAlive, syncReadinessOfInstalledShops } from "../../app/shops/onboarding.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { movingClock, PAID_IN_FULL, paymentThrough, stackForFile, waitFor } from "../support/stack";

const time = movingClock(() => stack());
const stack = stackForFile({ workers: false, clock: time.clock });
const DAY = 86_400_000;

/** One round of everything the background workers do (app/workers.server.ts). */
async function workersRound() {
  const services = stack().services;
  await syncReadinessOfInstalledShops(services);
  await keepOfflineTokensAlive(services);
  await deliverDueMessages(services, { worker: "quiet-spell" });
  await processWebhookInbox(services, { worker: "quiet-spell" });
  await reconcileOnce(services, { worker: "quiet-spell" });
  await purgeExpiredRows(services, { retentionDays: services.env.RETENTION_DAYS, customerDataDays: services.env.CUSTOMER_DATA_RETENTION_DAYS });
}

it("a payment made after 91 quiet days still reaches Shopify: the installed shop's offline token is kept alive without the merchant", async () => {
  const { services, standin, env, shopDomain } = stack();
  // The merchant installed the app and opened it once: token exchange stored an expiring pair.
  const issued = standin.state.issueExpiringToken({ clientId: env.SHOPIFY_API_KEY, clientSecret: env.SHOPIFY_API_SECRET });
  await services.db.session.update({
    where: { id: offlineSessionId(shopDomain) },
    data: { accessToken: issued.accessToken, refreshToken: issued.refreshToken, expires: new Date(issued.expiresAt), refreshTokenExpires: new Date(issued.refreshTokenExpiresAt) },
  });
  // A pair with most of its 90 days left is not renewed.
  expect(await keepOfflineTokensAlive(services)).toBe(0);
  await workersRound();
  expect(standin.state.tokenGrants().filter((g) => g.grantType === "refresh_token")).toEqual([]);

  // 91 days without a crypto payment and without the merchant opening the app; the workers
  // run all along (one round a day here).
  for (let day = 0; day < 91; day++) {
    await time.advance(DAY);
    await workersRound();
  }

  // A shopper pays in full and comes back from the gateway's page (the return reads the order).
  const { session, payment } = await paymentThrough(stack(), PAID_IN_FULL);
  await (await fetch(services.links.returnUrl(payment, "ok"), { redirect: "manual" })).text();
  await waitFor(async () => (await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).state === "paid", "the payment settled as paid");
  for (let round = 0; round < 3; round++) await workersRound();

  const refreshes = standin.state.tokenGrants().filter((g) => g.grantType === "refresh_token");
  expect({
    shopifyState: standin.state.session(session.id)?.state.code,
    refusedRefreshes: refreshes.filter((g) => g.status !== 200).map((g) => g.error),
  }).toEqual({ shopifyState: "RESOLVED", refusedRefreshes: [] });
}, 120_000);
