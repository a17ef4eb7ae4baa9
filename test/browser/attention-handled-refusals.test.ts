// "Mark as handled" refused in real Chromium, on a payment's page and on "Needs attention": the
// flag changed since the page was shown (flagged again for another reason, or handled in
// another tab). The refusal tells the merchant to read the flag as it is now, so the page shows
// it as it is now: the new reason, which the next press marks as handled, or no card at all.
import { expect, it } from "vitest";
import { browserForFile } from "../support/browser";
import { stackForFile } from "../support/stack";
import { DESKTOP, openAdmin } from "./support/admin";

const stack = stackForFile({ env: { DEV_ADMIN_LOGIN: "true" } });
const browser = browserForFile();

/** A payment of the stack's shop flagged as underpaid, with `detail`. */
async function flaggedPayment(detail: string) {
  const { session } = await stack().standin.state.startPayment({ test: true, locale: "en", amount: "30.00", currency: "EUR" });
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  await stack().services.db.payment.update({ where: { id: payment.id }, data: { attention: "underpaid", attentionDetail: detail, attentionResolvedAt: null } });
  return payment;
}

it("on a payment's page, a flag raised again for another reason is shown as it is now, and the next press marks it as handled", async () => {
  const payment = await flaggedPayment("The first reason.");
  const page = await browser().newPage({ viewport: DESKTOP });
  await openAdmin(page, stack(), `/app/payments/${payment.id}`);
  await page.getByText("The first reason.").waitFor();
  // Flagged again, for another reason, while the page is open.
  await stack().services.db.payment.update({ where: { id: payment.id }, data: { attentionDetail: "The second reason." } });

  await page.getByRole("button", { name: "Mark as handled" }).click();
  await page.getByText("This payment was flagged again since the page was shown").waitFor();
  await page.getByText("The second reason.").waitFor();
  expect(await page.getByText("The first reason.").count()).toBe(0);

  await page.getByRole("button", { name: "Mark as handled" }).click();
  await page.getByText("Marked as handled.").waitFor();
  await expect.poll(async () => (await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).attentionResolvedAt, { timeout: 10_000 }).not.toBeNull();
});

it("on Needs attention, a flag handled in another tab leaves the list when the press is refused", async () => {
  const payment = await flaggedPayment("Handled in another tab.");
  const page = await browser().newPage({ viewport: DESKTOP });
  await openAdmin(page, stack(), "/app/attention");
  const card = page.getByRole("article").filter({ hasText: "Handled in another tab." });
  await card.waitFor();
  await stack().services.db.payment.update({ where: { id: payment.id }, data: { attentionResolvedAt: new Date() } });

  await card.getByRole("button", { name: "Mark as handled" }).click();
  await page.getByText("That payment has nothing left to handle.").waitFor();
  await card.waitFor({ state: "detached", timeout: 10_000 });
});
