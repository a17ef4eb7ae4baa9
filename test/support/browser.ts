// Real Chromium for browser tests: Debian's /usr/bin/chromium driven by
// playwright-core, and screenshots written to test-results/screenshots/.
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { forThisFile } from "./for-this-file";

export const CHROMIUM_PATH = "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

const SCREENSHOT_DIR = fileURLToPath(new URL("../../test-results/screenshots/", import.meta.url));

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
}

/** One browser for the test file: launched before its first test, closed after its last. */
export function browserForFile(): () => Browser {
  return forThisFile("the browser", launchBrowser, (browser) => browser.close());
}

/** Saves a full-page screenshot as test-results/screenshots/<name>.png and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const safe = name.replace(/[^a-zA-Z0-9._-]+/g, "-");
  const path = `${SCREENSHOT_DIR}${safe}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}
