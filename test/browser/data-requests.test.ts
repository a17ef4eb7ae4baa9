// A customer's data request, in real Chromium: Shopify's customers/data_request leaves a
// report on the admin's "Customer data requests" page; the merchant downloads it (the file
// holds the customer's payment) and deletes it once answered, after a question that says what
// is lost; a download that fails says why.
import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { formatDateTime } from "../../app/admin/format";
import { recordCustomerDataRequest } from "../../app/shops/customer-data-requests.server";
import { browserForFile, saveScreenshot } from "../support/browser";
import { stackForFile } from "../support/stack";
import { DESKTOP, openAdmin, waitForHydration } from "./support/admin";

const stack = stackForFile({ env: { DEV_ADMIN_LOGIN: "true" } });
const browser = browserForFile();

it("the merchant downloads a customer's data report and deletes the request", async () => {
  const email = "wants.their.data@example.com";
  const { session } = await stack().standin.state.startPayment({ test: true, customer: { email } });
  const stored = await recordCustomerDataRequest(stack().services, {
    shopDomain: stack().shopDomain,
    webhookId: "data-request-webhook-1",
    payload: { customer: { id: 42, email }, orders_requested: [], data_request: { id: 7 } },
  });
  expect(stored?.paymentCount).toBe(1);

  const merchant = await browser().newPage({ viewport: DESKTOP, acceptDownloads: true });
  await openAdmin(merchant, stack(), "/app/data-requests");
  const card = merchant.getByRole("article", { name: `Data request of ${email}` });
  await card.getByText("To answer").waitFor();
  expect(await card.textContent()).toContain("1 payment with this customer's details");
  // The retention deletes it CUSTOMER_DATA_RETENTION_DAYS (90) after it came, and the card says when.
  const row = await stack().services.db.customerDataRequest.findFirstOrThrow();
  expect(await card.textContent()).toContain(`This report is deleted on ${formatDateTime(new Date(row.receivedAt.getTime() + 90 * 86_400_000))}, downloaded or not.`);
  await saveScreenshot(merchant, "admin-data-requests");

  const [download] = await Promise.all([merchant.waitForEvent("download"), card.getByRole("button", { name: "Download report (JSON)" }).click()]);
  expect(download.suggestedFilename()).toMatch(/^customer-data-request-\d{4}-\d{2}-\d{2}-.+\.json$/);
  const report = JSON.parse(await readFile((await download.path())!, "utf8")) as { customer: { email: string }; payments: { shopifyPaymentId: string }[] };
  expect(report.customer.email).toBe(email);
  expect(report.payments.map((p) => p.shopifyPaymentId)).toEqual([session.id]);
  await card.getByText("Downloaded", { exact: true }).waitFor();

  await card.getByRole("button", { name: "Delete" }).click();
  await card.getByText("Delete it once the customer has their report").waitFor();
  await card.getByRole("button", { name: "Yes, delete it" }).click();
  await merchant.getByText("Request deleted.").waitFor();
  await merchant.getByText("No customer has asked for their data.").waitFor();
  expect(await stack().services.db.customerDataRequest.count()).toBe(0);
}, 120_000);

it("a download of a request deleted meanwhile says in the page that the request no longer exists", async () => {
  const email = "gone.meanwhile@example.com";
  const stored = await recordCustomerDataRequest(stack().services, {
    shopDomain: stack().shopDomain,
    webhookId: "data-request-webhook-2",
    payload: { customer: { id: 43, email }, orders_requested: [], data_request: { id: 8 } },
  });
  const merchant = await browser().newPage({ viewport: DESKTOP });
  await openAdmin(merchant, stack(), "/app/data-requests");
  const card = merchant.getByRole("article", { name: `Data request of ${email}` });
  await card.getByText("To answer").waitFor();
  // Deleted in another tab (or by Shopify's customers/redact) while this page was open.
  await stack().services.db.customerDataRequest.delete({ where: { id: stored!.id } });

  const answered = merchant.waitForResponse((response) => response.request().method() === "POST" && new URL(response.url()).pathname.startsWith("/app/data-requests"));
  await card.getByRole("button", { name: "Download report (JSON)" }).click();
  expect((await answered).status()).toBe(404);
  await merchant.getByText("That request no longer exists.").waitFor({ timeout: 10_000 });
  await merchant.getByText("No customer has asked for their data.").waitFor();
}, 60_000);

it("Delete asks first, says when the report was never downloaded, and deletes nothing until confirmed", async () => {
  const email = "not.answered.yet@example.com";
  const stored = await recordCustomerDataRequest(stack().services, {
    shopDomain: stack().shopDomain,
    webhookId: "data-request-webhook-3",
    payload: { customer: { id: 44, email }, orders_requested: [], data_request: { id: 9 } },
  });
  const merchant = await browser().newPage({ viewport: DESKTOP });
  await openAdmin(merchant, stack(), "/app/data-requests");
  const card = merchant.getByRole("article", { name: `Data request of ${email}` });
  await card.getByText("To answer").waitFor();
  const kept = async () => (await stack().services.db.customerDataRequest.findUnique({ where: { id: stored!.id } })) !== null;

  // One press (a stray click or Enter) only asks, and the question has the focus.
  await card.getByRole("button", { name: "Delete" }).focus();
  await merchant.keyboard.press("Enter");
  await card.getByText("Its report was never downloaded: once deleted it is lost").waitFor();
  expect(await merchant.evaluate(() => document.activeElement?.textContent)).toContain("Delete this request?");
  // From the question, the keyboard reaches its answers.
  await merchant.keyboard.press("Tab");
  expect(await merchant.evaluate(() => document.activeElement?.textContent)).toBe("Yes, delete it");
  expect(await kept()).toBe(true);

  // Cancel leaves it, and gives the focus back to Delete.
  await card.getByRole("button", { name: "Cancel" }).click();
  await card.getByRole("button", { name: "Delete" }).waitFor();
  expect(await merchant.evaluate(() => document.activeElement?.textContent)).toBe("Delete");
  expect(await kept()).toBe(true);

  // A post of the form without the confirmation (a plain HTML form) is refused and deletes nothing.
  const refused = merchant.waitForResponse((response) => response.request().method() === "POST" && new URL(response.url()).pathname === "/app/data-requests");
  await merchant.evaluate((id) => {
    const form = document.createElement("form");
    form.method = "post";
    form.action = location.pathname + location.search;
    for (const [name, value] of [["intent", "delete"], ["id", id]] as const) form.append(Object.assign(document.createElement("input"), { type: "hidden", name, value }));
    document.body.append(form);
    form.submit();
  }, stored!.id);
  expect((await refused).status()).toBe(400);
  await waitForHydration(merchant);
  await merchant.getByText("Unknown action.").waitFor();
  expect(await kept()).toBe(true);

  await card.getByRole("button", { name: "Delete" }).click();
  await card.getByRole("button", { name: "Yes, delete it" }).click();
  await merchant.getByText("Request deleted.").waitFor();
  expect(await kept()).toBe(false);
}, 120_000);
