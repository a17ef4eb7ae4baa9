// The payments list's filters in real Chromium: after "Clear" the form says what the list now
// shows, and a payment's "Payments" link returns to the page of the list the merchant came
// from (the same filters and page), not to the whole unfiltered list. Download CSV saves the
// file of every payment the filters select.
import { readFile } from "node:fs/promises";
import type { Page } from "playwright-core";
import { beforeAll, describe, expect, it } from "vitest";
import { browserForFile } from "../support/browser";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";
import { DESKTOP, openAdmin } from "./support/admin";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
const browser = browserForFile();
let page: Page;

/** Waits until Remix has finished the navigation in progress (the loader's data is on the page). */
function settled(target: Page) {
  return target.waitForFunction(() => {
    const router = (window as unknown as { __remixRouter: { state: { navigation: { state: string } } } }).__remixRouter;
    return router.state.navigation.state === "idle";
  });
}

beforeAll(async () => {
  // The workers are off and the pages log nothing: one line, so the suite's log check has this file's log to read.
  stack().logger.info("admin payments list: 60 payments stored");
  const shop = await stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const base = Date.parse("2026-03-01T00:00:00Z");
  for (let i = 0; i < 60; i++) {
    await stack().services.db.payment.create({
      data: paymentColumns(shop.id, { state: i % 2 ? "failed" : "paid", gatewayStatus: i % 2 ? "EX" : "CO", createdAt: new Date(base + i * 60_000) }),
    });
  }
  page = await browser().newPage({ viewport: DESKTOP });
});

describe("payments list filters", () => {
  it("Clear empties the filter fields along with the list's filters", async () => {
    await openAdmin(page, stack(), "/app/payments?state=failed&status=EX&from=2026-03-01");
    expect(await page.getByLabel("State").inputValue()).toBe("failed");
    await page.getByText("1–25 of 30").waitFor();

    await page.getByRole("link", { name: "Clear" }).click();
    await page.waitForURL((url) => url.search === "");
    await settled(page);
    await page.getByText("1–25 of 60").waitFor();

    // The list is now unfiltered: the form must say so, or the next "Filter" brings the old filters back.
    const fields = {
      state: await page.getByLabel("State").inputValue(),
      status: await page.getByLabel("Gateway status").inputValue(),
      from: await page.getByLabel("From (UTC)").inputValue(),
    };
    expect(fields).toEqual({ state: "", status: "", from: "" });
  }, 60_000);

  it("the payment page's Payments link goes back to the filtered page the merchant came from", async () => {
    await openAdmin(page, stack(), "/app/payments?state=failed");
    await page.getByText("1–25 of 30").waitFor();
    await page.getByRole("button", { name: "Next" }).or(page.getByRole("link", { name: "Next" })).first().click();
    await page.waitForURL(/after=/);
    await settled(page);
    await page.getByText("26–30 of 30").waitFor();
    const listUrl = new URL(page.url());

    await page.locator("tbody a").first().click();
    await page.waitForURL(/\/app\/payments\/[^/?]+/);
    await settled(page);
    await page.getByRole("heading", { name: /^Payment / }).waitFor();
    // The page's back action (the navigation menu has a "Payments" link too, to the whole list).
    await page.locator("a[aria-label='Payments']").click();
    await page.waitForURL((url) => url.pathname === "/app/payments");
    await settled(page);
    await page.getByText("26–30 of 30").waitFor();

    const back = new URL(page.url());
    expect(back.searchParams.get("state")).toBe(listUrl.searchParams.get("state"));
    expect(back.searchParams.get("after")).toBe(listUrl.searchParams.get("after"));
  }, 60_000);

  it("Download CSV saves every payment the filters select, not only the page's, under the app's file name", async () => {
    await openAdmin(page, stack(), "/app/payments?state=failed");
    await page.getByText("1–25 of 30").waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download CSV" }).click()]);
    expect(download.suggestedFilename()).toMatch(/^payments-demo-shop-\d{4}-\d{2}-\d{2}\.csv$/);
    const lines = (await readFile(await download.path(), "utf8")).split("\r\n").filter(Boolean);
    expect(lines[0]).toMatch(/^created_at,updated_at,shopify_payment_id,/);
    const state = lines[0]!.split(",").indexOf("state");
    expect(lines.slice(1).map((line) => line.split(",")[state])).toEqual(Array(30).fill("failed"));
    expect(await page.getByText("The file could not be made").count()).toBe(0);
  }, 60_000);
});
