// Switching test mode in Settings says what it changed at checkout. The stack's shop has the
// gateway sandbox connected and no live device: test mode off leaves Shopify nothing to offer.
import { beforeAll, describe, expect, it } from "vitest";
import { getAdminPage, postAdminForm, postForms } from "../support/admin-pages";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
// The stack checks its log for secrets when it closes: these pages alone may write no line.
beforeAll(() => stack().logger.info("admin test mode switch: started"));

const shopRow = () => stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });

/** Saves the settings form as shown, with test mode set to `testMode`: the answer page. */
async function saveTestMode(testMode: boolean) {
  const page = await getAdminPage(stack(), "/app/settings");
  expect(page.status).toBe(200);
  const [form] = postForms(page.html);
  return postAdminForm(stack(), "/app/settings", { ...form!, testMode: testMode ? "true" : "false" });
}

describe("switching test mode", () => {
  it("tells the merchant, when test mode is turned off with no live device, that checkout no longer offers crypto", async () => {
    const on = await saveTestMode(true);
    expect(on.text).toContain("Settings saved.");
    expect((await shopRow()).paymentsAppReady).toBe(true);

    const off = await saveTestMode(false);
    // The save went through, and Shopify was told the method can no longer be offered.
    expect((await shopRow()).testMode).toBe(false);
    expect((await shopRow()).paymentsAppReady).toBe(false);
    // The merchant must be told so here, not only find out from a badge on another page.
    const banner = off.text.slice(off.text.indexOf("Settings"), off.text.indexOf("How shoppers pay"));
    expect(banner).toContain("Settings saved, but Shopify no longer offers crypto at checkout");
    expect(banner).toMatch(/no live device is connected/);

    const back = await saveTestMode(true);
    expect((await shopRow()).paymentsAppReady).toBe(true);
    expect(back.text).toContain("Settings saved. Shopify offers crypto at checkout again.");
  });
});
