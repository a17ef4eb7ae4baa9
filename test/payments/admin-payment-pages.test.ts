// The admin's payment pages over HTTP (development login, the real app server): what a
// payment's page says of its state, its Shopify side and its timeline; the list's pages,
// which start from a payment shown so that payments arriving meanwhile do not shift them;
// and the home page, where test payments are marked and counted apart from live ones.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { getAdminPage, pageText } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
// The stack checks its log for secrets and wants a line to check.
beforeAll(() => stack().logger.info("admin-payment-pages: started"));

const db = () => stack().services.db;

/** A payment row of the test shop: a 49.90 EUR test payment awaiting payment, unless `columns` say otherwise. */
async function makePayment(columns: Partial<Prisma.PaymentUncheckedCreateInput> = {}) {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  return db().payment.create({ data: paymentColumns(shop.id, columns) });
}

/** The payment ids the list page links to, in order. */
// A row's link carries the list's page (its filters and cursor) after the payment's id, for the way back.
const listedIds = (html: string) => [...html.matchAll(/href="\/app\/payments\/([A-Za-z0-9_-]+)(?:\?[^"]*)?"/g)].map((m) => m[1]!);

/** The path of the list's Previous or Next link, or null when the page has none. */
function pageLink(html: string, label: "Previous" | "Next"): string | null {
  const link = [...html.matchAll(/<a [^>]*>/g)].map((m) => m[0]).find((tag) => tag.includes(`aria-label="${label}"`));
  const href = link ? /href="([^"]*)"/.exec(link)?.[1] : undefined;
  return href ? href.replace(/&amp;/g, "&") : null;
}

describe("a payment's page", () => {
  it("does not say Shopify was told a paid payment is paid when Shopify refused the call", async () => {
    const payment = await makePayment({
      state: "paid",
      gatewayOrderId: randomUUID(),
      gatewayStatus: "CO",
      percentage: "100.0",
      attention: "shopify_error",
      attentionDetail: "Shopify refused the call, so this payment's outcome has not reached Shopify; the app keeps trying, at most 10 minutes apart. Access denied.",
    });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("The gateway confirmed the payment.");
    expect(page.text).toContain("Shopify not told yet");
    expect(page.text).not.toContain("Shopify was told");
  });

  it("says a payment that never started has nothing to wait for, rather than waiting for the shopper", async () => {
    const payment = await makePayment({ state: "not_started", responseStatus: 422 });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Not started");
    expect(page.text).toContain("Nothing to do: the payment never started. Shopify got an error answer when it asked to start it, and the shopper can pay again from checkout.");
    expect(page.text).not.toContain("The shopper has not finished paying yet.");
  });

  it("says a confirming order at 50 % has part of its amount, not that it was received", async () => {
    const payment = await makePayment({ state: "confirming", gatewayOrderId: randomUUID(), gatewayStatus: "AC", inputCurrency: "BTC", cryptoAmount: "0.00100000", percentage: "50.0", receivedAmount: "24.95" });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.text).toContain("Part of the amount (50.0%) has arrived; the rest is due before the order expires.");
    expect(page.text).not.toContain("Crypto was received");
  });

  it("words the timeline's verification and follow-up requests, with the app's answer and the payment's currency", async () => {
    const payment = await makePayment({ state: "paid", gatewayOrderId: randomUUID(), gatewayStatus: "CO", percentage: "100.0", shopifyOutcome: "resolved", amount: "1500", currency: "JPY" });
    const at = new Date();
    await db().paymentEvent.createMany({
      data: [
        { paymentId: payment.id, type: "verified", detail: JSON.stringify({ status: "CO", source: "reconcile" }), at },
        { paymentId: payment.id, type: "capture_requested", detail: JSON.stringify({ amount: "1000", answer: "capture.reject" }), at },
        { paymentId: payment.id, type: "capture_requested", detail: JSON.stringify({ amount: "1500", answer: "capture.resolve" }), at },
      ],
    });
    const page = await getAdminPage(stack(), `/app/payments/${payment.id}`);
    expect(page.text).toContain("Gateway order verified");
    expect(page.text).toContain("The gateway order was read through the periodic check and shows Completed: it agrees with the notification that settled the payment.");
    expect(page.text).toContain("A capture of 1000 JPY was asked. The app refused it; Shopify shows the merchant why.");
    expect(page.text).toContain("A capture of 1500 JPY was asked. The app accepted it.");
  });
});

describe("the payment list's pages", () => {
  // Payments of a day of their own, which the list's date filter keeps apart from the other tests' payments.
  const DAY = "2020-03-01";
  const dayFilter = `from=${DAY}&to=${DAY}`;
  const onDay = (minute: number) => new Date(Date.parse(`${DAY}T12:00:00.000Z`) + minute * 60_000);

  it("the next page after a new payment arrived shows the payments not yet seen, none from the page before, and Previous goes back", async () => {
    for (let i = 0; i < 30; i++) await makePayment({ createdAt: onDay(i) });
    const first = await getAdminPage(stack(), `/app/payments?${dayFilter}`);
    expect(listedIds(first.html)).toHaveLength(25);

    // A shopper pays while the merchant reads the first page.
    const arrived = await makePayment({ createdAt: onDay(60) });
    const next = pageLink(first.html, "Next");
    const second = await getAdminPage(stack(), next!);
    expect(second.status).toBe(200);
    expect(listedIds(second.html).filter((id) => listedIds(first.html).includes(id))).toEqual([]);
    expect(listedIds(second.html)).toHaveLength(5);
    expect(next).toMatch(/^\/app\/payments\?from=2020-03-01&to=2020-03-01&after=/);
    expect(first.text).toContain("1–25 of 30");
    expect(pageLink(first.html, "Previous")).toBeNull();
    expect(second.text).toContain("27–31 of 31");
    expect(pageLink(second.html, "Next")).toBeNull();

    const back = await getAdminPage(stack(), pageLink(second.html, "Previous")!);
    expect(listedIds(back.html)).toEqual(listedIds(first.html));
    expect(back.text).toContain("2–26 of 31");
    const newest = await getAdminPage(stack(), pageLink(back.html, "Previous")!);
    expect(listedIds(newest.html)[0]).toBe(arrived.id);
    expect(listedIds(newest.html)).toHaveLength(25);
  });

  it("keeps payments created at the same moment apart by their id, and the filters across pages", async () => {
    const day = "2020-04-01";
    const moment = new Date(`${day}T08:00:00.000Z`);
    const made = [];
    for (let i = 0; i < 27; i++) made.push(await makePayment({ createdAt: moment, state: "failed" }));
    await makePayment({ createdAt: moment, state: "paid" });
    const first = await getAdminPage(stack(), `/app/payments?state=failed&from=${day}&to=${day}`);
    const next = pageLink(first.html, "Next")!;
    expect(next).toContain("state=failed");
    const second = await getAdminPage(stack(), next);
    const seen = [...listedIds(first.html), ...listedIds(second.html)];
    expect(seen.toSorted()).toEqual(made.map((p) => p.id).toSorted());
  });

  it("a page size edge: 25 payments are one page, the 26th makes a second page with exactly that one", async () => {
    const day = "2020-05-01";
    const at = (minute: number) => new Date(Date.parse(`${day}T12:00:00.000Z`) + minute * 60_000);
    for (let i = 0; i < 25; i++) await makePayment({ createdAt: at(i) });
    const one = await getAdminPage(stack(), `/app/payments?from=${day}&to=${day}`);
    expect(listedIds(one.html)).toHaveLength(25);
    expect(pageLink(one.html, "Next")).toBeNull();
    const oldest = await makePayment({ createdAt: at(-1) });
    const first = await getAdminPage(stack(), `/app/payments?from=${day}&to=${day}`);
    const second = await getAdminPage(stack(), pageLink(first.html, "Next")!);
    expect(listedIds(second.html)).toEqual([oldest.id]);
  });

  it("a malformed cursor, or an old page number, gives the first page", async () => {
    const first = listedIds((await getAdminPage(stack(), `/app/payments?${dayFilter}`)).html);
    for (const query of ["after=nope", "before=nope", "after=", "after=2020-02-30T00:00:00.000Z~abc", `before=2020-03-01T12:00:00.000Z~${"x".repeat(80)}`, "after=%", "page=2", "page=abc"]) {
      const page = await getAdminPage(stack(), `/app/payments?${dayFilter}&${query}`);
      expect(page.status, query).toBe(200);
      expect(listedIds(page.html), query).toEqual(first);
    }
  });
});

describe("bad addresses", () => {
  it("bad query parameters give a clean list, and a bad payment path a 4xx", async () => {
    for (const query of ["page=abc", "page=-3", "page=1e309", "state=nope", "status=ZZ", "from=2026-99-99", "from=2026-02-30", "to=yesterday", "from=%", "state=paid&state=failed", "after=%E0%A4%A", "before="]) {
      const page = await getAdminPage(stack(), `/app/payments?${query}`);
      expect(page.status, query).toBe(200);
      expect(page.text, query).toContain("Payments");
    }
    for (const path of ["/app/payments/..%2F..", "/app/payments/a%20b", `/app/payments/${"x".repeat(80)}`, "/app/payments/%E0%A4%A"]) {
      const page = await getAdminPage(stack(), path);
      expect(page.status, path).toBeGreaterThanOrEqual(400);
      expect(page.status, path).toBeLessThan(500);
    }
  });
});

describe("the home page", () => {
  it("marks a test payment among the latest payments as the payment list does, and counts test payments apart from live ones", async () => {
    const soon = (ms: number) => new Date(Date.now() + ms);
    const live = await makePayment({ test: false, gatewayEnv: "live", state: "paid", gatewayStatus: "CO", amount: "12.00", currency: "USD", createdAt: soon(60_000) });
    const test = await makePayment({ test: true, state: "paid", gatewayStatus: "CO", amount: "77.00", currency: "USD", createdAt: soon(61_000) });

    const list = await getAdminPage(stack(), "/app/payments");
    const listRow = (shopifyId: string) => pageText(list.html.split("<tr").find((row) => row.includes(shopifyId)) ?? "");
    expect(listRow(test.shopifyPaymentId)).toContain("Test");
    expect(listRow(live.shopifyPaymentId)).not.toContain("Test");

    const home = await getAdminPage(stack(), "/app");
    expect(home.status).toBe(200);
    const latest = home.text.slice(home.text.indexOf("Latest payments"));
    expect(latest).toContain("77.00 USD Success Paid Test Completed");
    expect(latest).toContain("12.00 USD Success Paid Completed");

    const week = { createdAt: { gte: new Date(Date.now() - 7 * 86_400_000) }, state: "paid" };
    const livePaid = await db().payment.count({ where: { ...week, test: false } });
    const testPaid = await db().payment.count({ where: { ...week, test: true } });
    const lastWeekAt = home.text.indexOf("Last 7 days");
    const lastWeek = home.text.slice(lastWeekAt, home.text.indexOf("Needs attention", lastWeekAt));
    expect(lastWeek).toContain(`Paid: ${livePaid} `);
    expect(lastWeek).toContain(`Paid (test): ${testPaid} `);
  });
});
