// Opening the merchant admin in a browser through the development login.
import type { Page } from "playwright-core";
import type { Stack } from "../../support/stack";

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** Goes to an admin path as `shop` (the development login), waiting for the page to be interactive. */
export async function openAdmin(page: Page, stack: Stack, path: string, shop: string = stack.shopDomain): Promise<void> {
  const url = new URL(path, stack.app.url);
  url.searchParams.set("shop", shop);
  await interactive(page, () => page.goto(url.toString(), { waitUntil: "load" }));
}

/** Waits until the page already open is interactive (loading it again if it never becomes so). */
export function waitForHydration(page: Page): Promise<void> {
  return interactive(page, async () => undefined);
}

/** Reloads the page and waits until it is interactive again. */
export function reloadInteractive(page: Page): Promise<void> {
  return interactive(page, () => page.reload({ waitUntil: "load" }));
}

/**
 * Presses Save on the Settings page and waits until its answer, and any reading of the page's
 * data that follows it, are over.
 */
export async function saveSettingsForm(page: Page): Promise<void> {
  const answered = page.waitForResponse((response) => response.request().method() === "POST" && new URL(response.url()).pathname.startsWith("/app/settings"));
  await page.getByRole("button", { name: "Save" }).click();
  await answered;
  await page.waitForFunction(() => {
    const router = (window as unknown as { __remixRouter: { state: { navigation: { state: string }; revalidation: string } } }).__remixRouter;
    return router.state.navigation.state === "idle" && router.state.revalidation === "idle";
  });
}

/**
 * Remix's router is made while React hydrates the page, so this is true a moment before the
 * page's effects (listeners, timers) have run: a test must not count on them from here on.
 */
function hydrated(page: Page, timeout: number): Promise<boolean> {
  return page
    .waitForFunction(() => (window as unknown as { __remixRouter?: { state?: { initialized?: boolean } } }).__remixRouter?.state?.initialized === true, undefined, { timeout })
    .then(
      () => true,
      () => false,
    );
}

// What a page shows when the dev server handed it client modules from two generations of
// its dependency cache (it re-bundles dependencies the first time it meets them).
const STALE_MODULES = /Invalid hook call|reading 'useState'|Outdated Optimize Dep|error while hydrating/i;

/**
 * Runs `load` and waits until Remix has taken over the page (forms and buttons work after
 * that). When the dev server was still preparing client modules, the page is loaded again.
 */
async function interactive(page: Page, load: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; attempt <= 4; attempt++) {
    const problems: string[] = [];
    const onError = (error: Error) => problems.push(error.message);
    const onConsole = (message: { type(): string; text(): string }) => {
      if (message.type() === "error") problems.push(message.text());
    };
    page.on("pageerror", onError);
    page.on("console", onConsole);
    try {
      if (attempt === 1) await load();
      else await page.reload({ waitUntil: "load" });
      const ok = await hydrated(page, 20_000);
      if (ok && !problems.some((p) => STALE_MODULES.test(p))) return;
    } finally {
      page.off("pageerror", onError);
      page.off("console", onConsole);
    }
  }
  throw new Error(`the page at ${page.url()} never became interactive`);
}
