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

function hydrated(page: Page, timeout: number): Promise<boolean> {
  return page
    .waitForFunction(() => (window as unknown as { __remixRouter?: { state?: { initialized?: boolean } } }).__remixRouter?.state?.initialized === true, undefined, { timeout })
    .then(
      () => true,
      () => false,
    );
}

/**
 * Waits until Remix has taken over the page (forms and buttons work after that). The
 * dev server may still be preparing client modules the first time a page is opened; the
 * page is then loaded again.
 */
export async function waitForHydration(page: Page): Promise<void> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    if (await hydrated(page, 20_000)) return;
    await page.reload({ waitUntil: "load" });
  }
  throw new Error(`the page at ${page.url()} never became interactive`);
}
