// A shopper whose order expired with nothing paid comes back through the return link while
// Shopify's answer to the rejection is still on its way (Shopify slow, or out of reach for a
// while). The app knows the payment ended unpaid: the shopper goes back to the checkout to
// choose another way to pay, as the rejection would send them, and is never shown the page that
// waits for a payment being confirmed ("If you paid, do not pay again: the shop will confirm
// your order"), for an order that will never be confirmed.
import { beforeAll, expect, it } from "vitest";
import { enqueue, finalMessageKey } from "../../app/payments/outbox";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
beforeAll(() => stack().logger.info("return of a payment ended unpaid: started"));

it("the return of an expired, unpaid payment whose rejection Shopify has yet to take sends the shopper back to the checkout, by either link and however long they waited", async () => {
  const { services, shopDomain } = stack();
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const payment = await services.db.payment.create({
    data: paymentColumns(shop.id, { state: "failed", gatewayOrderId: `order-${Date.now()}`, gatewayStatus: "EX", merchantLocale: "en", shopifyOutcome: null }),
  });
  // Shopify has not taken the rejection yet: its call waits out a backoff.
  const message = await services.db.$transaction((tx) =>
    enqueue(tx, { shopDomain, paymentId: payment.id, dedupeKey: finalMessageKey(payment.id), payload: { kind: "payment.reject", gid: payment.gid, code: "CANCELLED_PAYMENT", merchantMessage: "Expired." }, now: new Date() }),
  );
  await services.db.outboxMessage.update({ where: { id: message.id }, data: { nextAttemptAt: new Date(Date.now() + 600_000) } });

  for (const outcome of ["ko", "ok", "standby"] as const) {
    const url = new URL(services.links.returnUrl(payment, outcome));
    for (const waiting of [null, String(Math.floor(Date.now() / 1000) - 300)]) {
      if (waiting) url.searchParams.set("waiting", waiting);
      const answer = await fetch(url, { redirect: "manual" });
      await answer.body?.cancel();
      expect([answer.status, answer.headers.get("location")], `${outcome}${waiting ? " after waiting" : ""}`).toEqual([303, payment.cancelUrl]);
    }
  }
  // The rejection is still queued for Shopify, untouched.
  expect(await services.db.outboxMessage.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({ status: "pending" });
});
