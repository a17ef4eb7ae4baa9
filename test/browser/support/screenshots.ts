// Screenshots for the README. Like every browser test's pictures they go to
// test-results/screenshots/; with UPDATE_SCREENSHOTS=1 they also replace the committed
// copies in docs/screenshots/ (so a plain test run leaves the checkout unchanged).
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { saveScreenshot } from "../../support/browser";

const DOCS_DIR = fileURLToPath(new URL("../../../docs/screenshots/", import.meta.url));

export async function saveDocScreenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  const path = await saveScreenshot(page, name);
  if (process.env.UPDATE_SCREENSHOTS !== "1") return path;
  await mkdir(DOCS_DIR, { recursive: true });
  const docPath = `${DOCS_DIR}${name}.png`;
  await page.screenshot({ path: docPath, fullPage: options.fullPage ?? true });
  return docPath;
}
