// A save refused because the settings were changed in another tab says "The
// page now shows them as they are: make your change again". In real Chromium the page must then
// show the settings as stored, and the merchant's change made again must be saved (not refused
// again and again until the page is reloaded by hand).
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { SETTINGS_CHANGED_MESSAGE } from "../../app/shops/onboarding.server";
import { browserForFile } from "../support/browser";
import { startStack, type Stack } from "../support/stack";
import { DESKTOP, openAdmin, saveSettingsForm } from "./support/admin";

let stack: Stack;
const browser = browserForFile();
let first: Page;
let second: Page;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
  stack.logger.info("settings changed elsewhere: started");
  first = await browser().newPage({ viewport: DESKTOP });
  second = await browser().newPage({ viewport: DESKTOP });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const shopRow = () => stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
const TEST_MODE = "Test mode: accept only Shopify test orders, paid on the gateway sandbox";
const CONFIRM = "Confirm every payment with the gateway before Shopify is told";

it("after a save refused for a change made in another tab, the page shows that change and the merchant's change made again is saved", async () => {
  await openAdmin(first, stack, "/app/settings");
  await openAdmin(second, stack, "/app/settings");
  expect((await shopRow()).testMode).toBe(false);

  // Tab 1 turns test mode on and saves.
  await first.getByLabel(TEST_MODE).check({ force: true });
  await saveSettingsForm(first);
  await first.getByText("Settings saved").first().waitFor();
  expect((await shopRow()).testMode).toBe(true);

  // Tab 2, loaded before, turns on the confirmation of every payment: refused, nothing saved.
  await second.getByLabel(CONFIRM).check({ force: true });
  await saveSettingsForm(second);
  await second.getByText(SETTINGS_CHANGED_MESSAGE).waitFor();
  expect((await shopRow()).readOrderOnWebhook).toBe(false);
  // "The page now shows them as they are": test mode, turned on in tab 1, shows as on.
  await second.waitForTimeout(500);
  expect(await second.getByLabel(TEST_MODE).isChecked(), "tab 2 shows test mode as stored").toBe(true);

  // The merchant makes the change again, as told (ticks the box unless it still shows ticked), and saves: it is saved.
  if (!(await second.getByLabel(CONFIRM).isChecked())) await second.getByLabel(CONFIRM).check({ force: true });
  await saveSettingsForm(second);
  await second.waitForTimeout(300);
  const row = await shopRow();
  expect(row.readOrderOnWebhook, "the change made again was saved").toBe(true);
  expect(row.testMode).toBe(true);
}, 90_000);
