// Removing a device's credentials in real Chromium, on a shop with both gateways connected (the
// gateway sandbox and a stand-in for the live gateway, so that the removal section stays on the
// page while one of them is not connected): the question is asked about the credentials the
// merchant pressed "Remove" for, never left open for a device connected since, and its answer
// removes those credentials alone: a device connected in their place from elsewhere (another
// tab, another staff member) before the answer arrives stays; and a keyboard user who presses
// "Remove" lands on the question, and back on "Remove" after a cancel, instead of being sent
// back to the top of the document.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectSandbox, CREDENTIALS_CHANGED_MESSAGE } from "../../app/shops/onboarding.server";
import { postAdminForm } from "../support/admin-pages";
import { browserForFile } from "../support/browser";
import { startStackWithLiveGateway, type LiveGatewayStandin } from "../support/live-gateway";
import type { Stack } from "../support/stack";
import { DESKTOP, openAdmin } from "./support/admin";

let live: LiveGatewayStandin;
let stack: Stack;
const browser = browserForFile();
let page: Page;

beforeAll(async () => {
  ({ stack, live } = await startStackWithLiveGateway({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } }));
  stack.logger.info("admin-remove-credentials: started");
  page = await browser().newPage({ viewport: DESKTOP });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await live?.close();
});

/** The text of the element that has focus, or "body" when focus fell to the document. */
function focused(target: Page): Promise<string> {
  return target.evaluate(() => {
    const active = document.activeElement;
    return active === null || active === document.body ? "body" : (active.textContent ?? active.tagName).trim();
  });
}

describe("removing credentials", () => {
  it("does not ask again about the sandbox device connected after a removal", async () => {
    await openAdmin(page, stack, "/app/onboarding");
    await page.getByRole("button", { name: "Remove the sandbox credentials" }).click();
    await page.getByRole("button", { name: "Yes, remove them" }).click();
    await page.getByText("The sandbox device's credentials were removed.").waitFor();

    await page.getByRole("button", { name: "Connect the gateway sandbox" }).click();
    await page.getByText("Test mode is ready").waitFor();
    await page.getByRole("button", { name: "Remove the live credentials" }).waitFor();
    // The page's data read again after the connection shows the new sandbox device (on a busy
    // machine a moment after the connection's own answer).
    await page.getByRole("button", { name: "Remove the sandbox credentials" }).waitFor();

    // The merchant has not asked to remove the new sandbox device.
    expect(await page.getByText("Remove the sandbox device's credentials?").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Yes, remove them" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Remove the sandbox credentials" }).count()).toBe(1);
  }, 60_000);

  it("closes the question once another sandbox device is connected in place of the one it was asked about", async () => {
    await openAdmin(page, stack, "/app/onboarding");
    await page.getByRole("button", { name: "Remove the sandbox credentials" }).click();
    await page.getByText("Remove the sandbox device's credentials?").waitFor();

    await page.getByRole("button", { name: "Reconnect the gateway sandbox" }).click();
    await page.getByText("Test mode is ready").waitFor();
    // The page's data read again after the connection names other credentials: the question closes.
    await page.getByText("Remove the sandbox device's credentials?").waitFor({ state: "detached", timeout: 5_000 });
    await page.getByRole("button", { name: "Remove the sandbox credentials" }).waitFor();
    expect(await page.getByRole("button", { name: "Yes, remove them" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Remove the sandbox credentials" }).count()).toBe(1);
  }, 60_000);

  it("moves focus to the question when Remove is pressed from the keyboard, and back to Remove on Cancel", async () => {
    await openAdmin(page, stack, "/app/onboarding");
    await page.getByRole("button", { name: "Remove the live credentials" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("Remove the live device's credentials?").waitFor();
    expect(await focused(page)).toContain("Remove the live device's credentials?");

    // From the question, the keyboard reaches its answers.
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("Yes, remove them");
    await page.keyboard.press("Tab");
    expect(await focused(page)).toBe("Cancel");
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Remove the live credentials" }).waitFor();
    expect(await focused(page)).toBe("Remove the live credentials");
    expect((await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } })).liveDeviceKeyEnc).not.toBeNull();
  }, 60_000);

  it("refuses a removal confirmed for a device another was connected in place of since, and shows the one connected", async () => {
    await openAdmin(page, stack, "/app/onboarding");
    await page.getByRole("button", { name: "Remove the sandbox credentials" }).click();
    await page.getByText("Remove the sandbox device's credentials?").waitFor();

    // Meanwhile, in another tab or by a colleague, the sandbox is connected again: another device.
    const reconnected = await connectSandbox(stack.services, stack.shopDomain);
    if (!reconnected.ok) throw new Error(`could not reconnect the sandbox: ${reconnected.message}`);

    // The answer was given for the earlier device: the one connected since stays, and the merchant is told why.
    await page.getByRole("button", { name: "Yes, remove them" }).click();
    await page.getByText(/^(Nothing was removed|The sandbox device's credentials were removed)/).waitFor();
    const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
    expect(shop.sandboxDeviceKeyEnc, "the device connected since is still connected").toBe(reconnected.shop.sandboxDeviceKeyEnc);
    await page.getByText(CREDENTIALS_CHANGED_MESSAGE).waitFor();
    // The page's data is read again: the question about the earlier device closes.
    await page.getByText("Remove the sandbox device's credentials?").waitFor({ state: "detached", timeout: 5_000 });
    expect(await page.getByRole("button", { name: "Remove the sandbox credentials" }).count()).toBe(1);
  }, 60_000);

  it("refuses a removal that does not name the credentials it was confirmed for", async () => {
    const before = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
    const unnamed = await postAdminForm(stack, "/app/onboarding", { intent: "remove", env: "sandbox", confirm: "yes" });
    expect(unnamed.status).toBe(400);
    const misnamed = await postAdminForm(stack, "/app/onboarding", { intent: "remove", env: "sandbox", confirm: "yes", credentials: "not-these-credentials" });
    expect(misnamed.status).toBe(409);
    expect((await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } })).sandboxDeviceKeyEnc).toBe(before.sandboxDeviceKeyEnc);
  }, 60_000);
});
