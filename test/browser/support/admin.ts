// Opening the merchant admin in a browser through the development login.
import type { Page } from "playwright-core";
import type { Stack } from "../../support/stack";

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** Goes to an admin path as `shop` (the development login), waiting for the page to be interactive. */
export async function openAdmin(page: Page, stack: Stack, path: string, shop: string = stack.shopDomain): Promise<void> {
  const url = new URL(path, stack.app.url);
  url.searchParams.set("shop", shop);
  await page.goto(url.toString(), { waitUntil: "load" });
  await waitForHydration(page);
}

/** Remix marks the document once the client has taken over; forms and buttons work after that. */
export async function waitForHydration(page: Page): Promise<void> {
  await page.waitForFunction(() => (window as unknown as { __remixContext?: unknown }).__remixContext !== undefined && document.readyState === "complete");
  await page.waitForFunction(() => (window as unknown as { __remixRouter?: { state?: { initialized?: boolean } } }).__remixRouter?.state?.initialized === true, undefined, { timeout: 60_000 });
}
