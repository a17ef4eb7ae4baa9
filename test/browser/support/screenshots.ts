// Screenshots for the README: written to docs/screenshots/<name>.png (and, like every
// browser test's pictures, to test-results/screenshots/).
import { mkdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { saveScreenshot } from "../../support/browser";

const DOCS_DIR = fileURLToPath(new URL("../../../docs/screenshots/", import.meta.url));

export async function saveDocScreenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  await mkdir(DOCS_DIR, { recursive: true });
  await saveScreenshot(page, name);
  const path = `${DOCS_DIR}${name}.png`;
  await page.screenshot({ path, fullPage: options.fullPage ?? true });
  return path;
}
