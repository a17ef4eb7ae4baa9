// The payment list's query string: filters and the page's cursor read with zod, anything
// malformed dropped (the list then shows more, never another day or a failed page), and the
// links to other pages carrying the filters with a cursor.
import { describe, expect, it } from "vitest";
import { beyondCursor, cursorText, filtersQuery, listPageQuery, parsePageCursor, parsePaymentFilters, filtersWhere, isSearchableReference } from "../../app/admin/payment-filters";

describe("parsePaymentFilters", () => {
  it("keeps a real day and drops an impossible one instead of moving it to another day", () => {
    expect(parsePaymentFilters(new URLSearchParams("from=2026-02-28&to=2028-02-29"))).toMatchObject({ from: "2026-02-28", to: "2028-02-29" });
    for (const impossible of ["2026-02-29", "2026-02-30", "2026-02-31", "2026-04-31", "2026-13-01", "2026-00-10", "2026-01-32"]) {
      const filters = parsePaymentFilters(new URLSearchParams(`from=${impossible}&to=${impossible}`));
      expect(filters.from, impossible).toBeUndefined();
      expect(filters.to, impossible).toBeUndefined();
      expect(filtersWhere("shop", filters, []).createdAt, impossible).toBeUndefined();
    }
  });
});

describe("the reference to find", () => {
  it("keeps one pasted reference, spaces around it taken off, and selects the payments found holding it (none: nothing)", () => {
    const hash = "0x9f2c4ad1b1e2f1c3a4b5c6d7e8f90112233445566778899aabbccddeeff0011";
    const filters = parsePaymentFilters(new URLSearchParams({ q: `  ${hash}\n` }));
    expect(filters.q).toBe(hash);
    expect(filtersWhere("shop", filters, ["p1", "p2"])).toEqual({ shopId: "shop", id: { in: ["p1", "p2"] } });
    expect(filtersWhere("shop", filters, [])).toEqual({ shopId: "shop", id: { in: [] } });
    expect(Object.fromEntries(new URLSearchParams(filtersQuery(filters)))).toEqual({ q: hash });
    expect(parsePaymentFilters(new URLSearchParams({ q: "gid://shopify/PaymentSession/123" })).q).toBe("gid://shopify/PaymentSession/123");
  });

  it("drops an empty one, and takes off the invisible characters a copy from a web page brings", () => {
    for (const q of ["", "   ", "\u200b"]) {
      const filters = parsePaymentFilters(new URLSearchParams({ q }));
      expect(filters.q, JSON.stringify(q)).toBeUndefined();
      expect(filtersWhere("shop", filters, ["p1"]), JSON.stringify(q)).toEqual({ shopId: "shop" });
    }
    expect(parsePaymentFilters(new URLSearchParams({ q: "0x9f2c\u200b4ad1\ufeff" })).q).toBe("0x9f2c4ad1");
  });

  it("keeps an overlong or multi-part one, which matches nothing: the list says so, not every payment as if they matched", () => {
    for (const q of ["x".repeat(201), "two words", "tab\there", "nul\u0000"]) {
      const filters = parsePaymentFilters(new URLSearchParams({ q }));
      expect(filters.q, JSON.stringify(q)).toBe(q);
      expect(isSearchableReference(filters.q!), JSON.stringify(q)).toBe(false);
      expect(filtersWhere("shop", filters, ["p1"]), JSON.stringify(q)).toEqual({ shopId: "shop", id: { in: [] } });
      expect(Object.fromEntries(new URLSearchParams(filtersQuery(filters)))).toEqual({ q });
    }
    // Cut to 256 characters, longer than any reference a payment holds.
    expect(parsePaymentFilters(new URLSearchParams({ q: "y".repeat(5_000) })).q).toBe("y".repeat(256));
  });
});

describe("the page's cursor", () => {
  const payment = { createdAt: new Date("2026-05-01T12:34:56.789Z"), id: "cmwvdt0n9001a9g7dj4jaba71" };

  it("reads back the cursor of a payment, after it or before it", () => {
    const text = cursorText(payment);
    expect(parsePageCursor(new URLSearchParams({ after: text }))).toEqual({ direction: "after", ...payment });
    expect(parsePageCursor(new URLSearchParams({ before: text }))).toEqual({ direction: "before", ...payment });
  });

  it("reads no cursor (the first page) from a missing or malformed one", () => {
    const bad = ["", "nope", "2026-05-01T12:34:56.789Z", "2026-02-30T00:00:00.000Z~abc", "2026-05-01T25:00:00.000Z~abc", "2026-05-01T12:34:56Z~abc", "2026-05-01T12:34:56.789Z~a b", `2026-05-01T12:34:56.789Z~${"x".repeat(65)}`];
    expect(parsePageCursor(new URLSearchParams())).toBeUndefined();
    for (const value of bad) {
      expect(parsePageCursor(new URLSearchParams({ after: value })), value).toBeUndefined();
      expect(parsePageCursor(new URLSearchParams({ before: value })), value).toBeUndefined();
    }
  });

  it("selects the payments older than the cursor's after it, and newer before it, the id deciding between equal times", () => {
    expect(beyondCursor({ direction: "after", ...payment })).toEqual({ createdAt: { lte: payment.createdAt }, OR: [{ createdAt: { lt: payment.createdAt } }, { createdAt: payment.createdAt, id: { lt: payment.id } }] });
    expect(beyondCursor({ direction: "before", ...payment })).toEqual({ createdAt: { gte: payment.createdAt }, OR: [{ createdAt: { gt: payment.createdAt } }, { createdAt: payment.createdAt, id: { gt: payment.id } }] });
  });

  it("links to another page with the same filters and the cursor", () => {
    const filters = parsePaymentFilters(new URLSearchParams("state=paid&status=CO&from=2026-05-01&to=2026-05-31"));
    const next = new URLSearchParams(filtersQuery(filters, { after: cursorText(payment) }));
    expect(Object.fromEntries(next)).toEqual({ state: "paid", status: "CO", from: "2026-05-01", to: "2026-05-31", after: "2026-05-01T12:34:56.789Z~cmwvdt0n9001a9g7dj4jaba71" });
    expect(filtersQuery(parsePaymentFilters(new URLSearchParams()), { before: "x" })).toBe("?before=x");
  });

  it("writes the way back to a page of the list from its parsed filters and cursor only", () => {
    const cursor = cursorText(payment);
    const back = (query: Record<string, string>) => Object.fromEntries(new URLSearchParams(listPageQuery(new URLSearchParams(query))));
    expect(back({ state: "failed", status: "EX", after: cursor })).toEqual({ state: "failed", status: "EX", after: cursor });
    expect(back({ to: "2026-05-31", before: cursor })).toEqual({ to: "2026-05-31", before: cursor });
    // Anything else of the URL, or a value the list would not take, is left out.
    expect(listPageQuery(new URLSearchParams("state=lost&after=nonsense&next=https://evil.example&shop=a.myshopify.com"))).toBe("");
    expect(listPageQuery(new URLSearchParams())).toBe("");
  });
});
