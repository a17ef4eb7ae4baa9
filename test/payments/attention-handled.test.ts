// "Mark as handled" closes the flag the merchant was shown, and only that one: a payment has
// one flag at a time, and a newer one raised while the page was open (a late payment after an
// underpayment) stays open until the merchant has seen it. Over HTTP, as the admin's forms post.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { ATTENTION_PAGE_LIMIT } from "../../app/admin/payments.server";
import { settleFromGatewayOrder } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { getAdminPage, postAdminForm, postForms } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
// The stack checks its log for secrets and wants a line to check.
beforeAll(() => stack().logger.info("attention-handled: started"));

const db = () => stack().services.db;

/** An underpaid (IA) payment, rejected and flagged for the merchant, with no transaction read yet. */
async function underpaidPayment() {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return db().payment.create({
    data: paymentColumns(shop.id, {
      gatewayOrderId: randomUUID(),
      gatewayStatus: "IA",
      percentage: "60.0",
      state: "failed",
      shopifyOutcome: "rejected",
      attention: "underpaid",
      attentionDetail: "The shopper paid 60 % of the order.",
    }),
  });
}

/** The shopper sends more crypto: the next read of the order flags a late payment, replacing the underpaid flag. */
async function latePaymentArrives(payment: { id: string; gatewayOrderId: string | null }) {
  await settleFromGatewayOrder(stack().services, payment.id, documentedOrder(payment.gatewayOrderId!, "IA", 1, new Date().toISOString()), "reconcile", new Date());
  const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(flagged).toMatchObject({ attention: "late_payment", attentionResolvedAt: null });
}

const openFlag = async (paymentId: string) => (await db().payment.findUniqueOrThrow({ where: { id: paymentId } })).attentionResolvedAt === null;

describe.each([
  { page: "the attention page", path: () => "/app/attention", form: (forms: Record<string, string>[], id: string) => forms.find((f) => f.paymentId === id) },
  { page: "the payment's page", path: (id: string) => `/app/payments/${id}`, form: (forms: Record<string, string>[]) => forms.find((f) => f.intent === "handled") },
])("on $page", ({ path, form }) => {
  it("a form shown for an older flag does not close a newer one: it says the payment was flagged again, and the page then shows the new flag", async () => {
    const payment = await underpaidPayment();
    const seen = await getAdminPage(stack(), path(payment.id));
    expect(seen.text).toContain("Shopper paid too little");
    const stale = form(postForms(seen.html), payment.id);
    expect(stale).toBeDefined();

    await latePaymentArrives(payment);
    const answer = await postAdminForm(stack(), path(payment.id), stale!);
    expect(answer.status).toBe(409);
    expect(answer.text).toContain("This payment was flagged again since the page was shown");
    expect(await openFlag(payment.id)).toBe(true);

    // The form of the page as it is now closes the late-payment flag.
    const current = form(postForms((await getAdminPage(stack(), path(payment.id))).html), payment.id);
    expect((await postAdminForm(stack(), path(payment.id), current!)).status).toBe(200);
    expect(await openFlag(payment.id)).toBe(false);
    const events = await db().paymentEvent.findMany({ where: { paymentId: payment.id, type: "attention_handled" } });
    expect(events).toHaveLength(1);
  });

  it("the form of the flag shown closes it once; a repeat, or a form without the flag it was shown for, changes nothing", async () => {
    const payment = await underpaidPayment();
    const shown = form(postForms((await getAdminPage(stack(), path(payment.id))).html), payment.id)!;
    const { flag: _flag, ...withoutFlag } = shown;
    expect((await postAdminForm(stack(), path(payment.id), withoutFlag)).status).toBe(400);
    expect(await openFlag(payment.id)).toBe(true);
    expect((await postAdminForm(stack(), path(payment.id), shown)).status).toBe(200);
    expect(await openFlag(payment.id)).toBe(false);
    const again = await postAdminForm(stack(), path(payment.id), shown);
    expect(again.status).toBe(409);
    expect(again.text).toContain("nothing left to handle");
  });
});

it("the attention page says when it shows only the latest flags of more than it can list", async () => {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const open = await db().payment.count({ where: { shopId: shop.id, attention: { not: null }, attentionResolvedAt: null } });
  const more = ATTENTION_PAGE_LIMIT + 1 - open;
  await db().payment.createMany({
    data: Array.from({ length: more }, () => paymentColumns(shop.id, { state: "failed", attention: "unknown_status" })),
  });
  const page = await getAdminPage(stack(), "/app/attention");
  expect(page.text).toContain(`Showing the ${ATTENTION_PAGE_LIMIT} latest of ${ATTENTION_PAGE_LIMIT + 1} payments that need attention.`);
  expect(postForms(page.html).filter((form) => form.intent === "handled")).toHaveLength(ATTENTION_PAGE_LIMIT);
});
