// The shopper's side of a test: paying from the Shopify stand-in's checkout simulator.
import type { Page } from "playwright-core";
import type { Stack } from "../../support/stack";

export interface CheckoutChoices {
  amount?: string;
  currency?: string;
  locale?: string;
}

/** Fills the checkout simulator (a test order) and presses "Pay now"; returns the Shopify payment session id. */
export async function payFromCheckout(page: Page, stack: Stack, choices: CheckoutChoices = {}, beforeSubmit?: () => Promise<void>): Promise<string> {
  await page.goto(`${stack.standin.origin}/checkout`);
  if (choices.amount) await page.fill('input[name="amount"]', choices.amount);
  if (choices.currency) await page.selectOption('select[name="currency"]', choices.currency);
  if (choices.locale) await page.selectOption('select[name="locale"]', choices.locale);
  const before = new Set(stack.standin.state.paymentSessions().map((s) => s.id));
  await beforeSubmit?.();
  await page.click('button[type="submit"]:has-text("Pay now")');
  await page.waitForURL((url) => !url.pathname.startsWith("/checkout"), { timeout: 30_000 });
  const created = stack.standin.state.paymentSessions().find((s) => !before.has(s.id));
  if (!created) throw new Error("the checkout created no payment session");
  return created.id;
}
