// What a page's Copy buttons write: the browser's clipboard, replaced by a record the test reads.
import type { Page } from "playwright-core";

/** Records what the page's copy buttons hand to the clipboard, in order. */
export async function recordCopies(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const copies: string[] = [];
    Object.defineProperty(window, "__copies", { value: copies });
    Object.defineProperty(Navigator.prototype, "clipboard", {
      configurable: true,
      get: () => ({ writeText: (text: string) => (copies.push(text), Promise.resolve()) }),
    });
  });
  return () => page.evaluate(() => [...(window as unknown as { __copies: string[] }).__copies]);
}
