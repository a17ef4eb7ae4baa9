// The payment list's date filters and page cursors at the ends of the calendar, on both
// databases: a year neither database takes (0000) is malformed and dropped like any other,
// a "To" of 9999-12-31 keeps the payments before it (the day after it is a year no column
// takes), and "To" takes in its day to the last stored millisecond.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAdminPage } from "../support/admin-pages";
import { paymentColumns } from "../support/payment-rows";
import { createTestPostgresDatabase } from "../support/postgres";
import { startStack, type Stack } from "../support/stack";

describe.each(["SQLite", "PostgreSQL"] as const)("the payment list on %s", (name) => {
  let stack: Stack;
  let database: Awaited<ReturnType<typeof createTestPostgresDatabase>> | undefined;
  const lastMoment = new Date("2026-03-14T23:59:59.999Z");

  beforeAll(async () => {
    database = name === "PostgreSQL" ? await createTestPostgresDatabase() : undefined;
    stack = await startStack({ databaseUrl: database?.url, workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
    // The stack checks its log for secrets and wants a line to check.
    stack.logger.info(`payment-list-dates on ${name}: started`);
    const shop = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
    await stack.services.db.payment.create({ data: paymentColumns(shop.id, { createdAt: lastMoment }) });
  }, 60_000);

  afterAll(async () => {
    await stack?.close();
    await database?.drop();
  });

  const list = async (query: string) => {
    const page = await getAdminPage(stack, `/app/payments?${query}`);
    expect(page.status, query).toBe(200);
    return page.text.includes("No payments match these filters.") ? "none" : "the payment";
  };

  it("drops a year 0000 in a filter or a cursor, showing the first page as without it", async () => {
    expect(await list("from=0000-01-01")).toBe("the payment");
    expect(await list("to=0000-01-01")).toBe("the payment");
    expect(await list("after=0000-01-01T00:00:00.000Z~abc")).toBe("the payment");
    expect(await list("before=0000-01-01T00:00:00.000Z~abc")).toBe("the payment");
  });

  it("takes the first and last days of the calendar as they are", async () => {
    expect(await list("to=9999-12-31")).toBe("the payment");
    expect(await list("from=0001-01-01&to=9999-12-31")).toBe("the payment");
    expect(await list("from=9999-12-31")).toBe("none");
    expect(await list("to=0001-01-01")).toBe("none");
  });

  it("counts a payment at its day's last millisecond in that day", async () => {
    expect(await list("from=2026-03-14&to=2026-03-14")).toBe("the payment");
    expect(await list("to=2026-03-13")).toBe("none");
    expect(await list("from=2026-03-15")).toBe("none");
  });
});
