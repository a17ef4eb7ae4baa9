// Hostile and malformed input to the merchant's admin actions and the shopper's coin pick:
// every answer is a 4xx with a reason or the normal page (a redirect back), never a 5xx, and
// neither the shop's row nor the payment's row changes unless the input was a valid one.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getAdminPage, postForms } from "../support/admin-pages";
import { startStack, type Stack } from "../support/stack";

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

const db = () => stack.services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });

function adminUrl(path: string): string {
  const url = new URL(path, stack.app.url);
  url.searchParams.set("shop", stack.shopDomain);
  return url.toString();
}

async function stored() {
  const [shop, payments, requests, outbox, events] = await Promise.all([
    shopRow(),
    db().payment.findMany({ orderBy: { id: "asc" } }),
    db().customerDataRequest.findMany({ orderBy: { id: "asc" } }).catch(() => []),
    db().outboxMessage.count(),
    db().paymentEvent.count(),
  ]);
  const { updatedAt: _u, ...shopRest } = shop as typeof shop & { updatedAt?: Date };
  return { shop: shopRest, payments, requests, outbox, events };
}

async function post(path: string, init: RequestInit): Promise<{ status: number; text: string }> {
  const response = await fetch(adminUrl(path), { method: "POST", redirect: "manual", ...init });
  return { status: response.status, text: await response.text() };
}

function expectNo5xx(answer: { status: number; text: string }, what: string) {
  expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
}

function expectClientError(answer: { status: number; text: string }, what: string) {
  expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(answer.status, `${what}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
  expect(answer.text.length, what).toBeGreaterThan(0);
}

const ADMIN_ACTIONS = ["/app/settings", "/app/onboarding", "/app/attention", "/app/data-requests", "/app/payments/cnotapayment0000000000000"];
const ALL_ADMIN_PATHS = [...ADMIN_ACTIONS, "/app", "/app?index", "/app/health", "/app/payments", "/app/payments?index"];

// Intents that are valid on their own (connect_sandbox, check) change things by design: left out.
const INTENTS = ["connect", "create_device", "remove", "download", "delete", "handled", "", "CONNECT", "x".repeat(5000)];
const FIELD_NAMES = ["intent", "env", "deviceKey", "secretKeyHex", "name", "confirm", "credentials", "id", "paymentId", "flag", "checkoutMode", "gatewayLanguage", "testMode", "version", "symbol", "liveFixedCurrency", "liveOfferedCurrencies", "__proto__", "constructor"];

const fieldValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("live", "sandbox", "LIVE", "yes", "true", "false", "", " ", "\u0000", "a".repeat(22), "-".repeat(22), "x".repeat(70_000)),
);

describe("the admin actions", () => {
  it("answer random form bodies with a 4xx and a reason (or the page), never a 5xx, changing nothing", async () => {
    const before = await stored();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ALL_ADMIN_PATHS),
        fc.constantFrom(...INTENTS),
        fc.array(fc.tuple(fc.constantFrom(...FIELD_NAMES), fieldValue), { maxLength: 8 }),
        async (path, intent, pairs) => {
          const form = new URLSearchParams();
          form.append("intent", intent);
          for (const [name, value] of pairs) form.append(name, value);
          const answer = await post(path, { body: form });
          expectNo5xx(answer, `${path} ${form.toString().slice(0, 200)}`);
        },
      ),
      { numRuns: 150 },
    );
    expect(await stored()).toEqual(before);
  }, 120_000);

  it.each(ALL_ADMIN_PATHS)("%s: wrong content types, broken bodies, non-UTF-8 and repeated fields get a 4xx, changing nothing", async (path) => {
    const before = await stored();
    const cases: [string, RequestInit][] = [
      ["JSON", { headers: { "content-type": "application/json" }, body: JSON.stringify({ intent: "remove", env: "sandbox", confirm: "yes" }) }],
      ["plain text", { headers: { "content-type": "text/plain" }, body: "intent=remove&env=sandbox" }],
      ["no content type", { body: new Uint8Array([0x69, 0x6e, 0x74]) }],
      ["octet stream", { headers: { "content-type": "application/octet-stream" }, body: new Uint8Array([0xff, 0xfe, 0x00, 0x01]) }],
      ["broken multipart", { headers: { "content-type": "multipart/form-data; boundary=x" }, body: "--x\r\nnot a part" }],
      ["multipart without boundary", { headers: { "content-type": "multipart/form-data" }, body: "--x\r\n\r\n--x--" }],
      ["urlencoded with raw non-UTF-8 bytes", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: new Uint8Array([0x69, 0x6e, 0x74, 0x65, 0x6e, 0x74, 0x3d, 0xff, 0xc3, 0x28]) }],
      ["urlencoded with bad percent escapes", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "intent=%FF%FE%&env=%zz&%%%=1" }],
      ["urlencoded with a charset it is not", { headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-16" }, body: "intent=remove" }],
      ["repeated intents", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: "intent=nope&intent=remove&env=sandbox&env=live&confirm=no&confirm=yes" }],
      ["a file where a field goes", { body: (() => { const f = new FormData(); f.append("intent", new Blob(["remove"]), "intent.txt"); f.append("checkoutMode", new Blob(["app_page"]), "x"); return f; })() }],
      ["many fields", { body: new URLSearchParams(Array.from({ length: 20_000 }, (_, i) => [`f${i}`, "v"])) }],
      // A huge body to a route without an action is in connection-reset.test.ts.
      ...(ADMIN_ACTIONS.includes(path) ? ([["one huge field", { body: new URLSearchParams({ intent: "x".repeat(900_000) }) }]] as [string, RequestInit][]) : []),
    ];
    for (const [what, init] of cases) expectClientError(await post(path, init), `${path} ${what}`);
    expect(await stored()).toEqual(before);
  }, 60_000);
});

// The settings form: each option at its bounds and beyond. A 200 stores exactly what was posted
// (a coin the gateway lists); any other answer is a 4xx and stores nothing.
describe("the settings form at its bounds", () => {
  const MODES = ["gateway_choice", "fixed_coin", "app_page", "", "GATEWAY_CHOICE", "x".repeat(33)];
  const LANGUAGES = ["AUTO", "EN", "ES", "PT", "IT", "FR", "DE", "en", "", "ZZ", "xxxxxxxxx"];
  const BOOLS = ["true", "false", "", "TRUE", "1", "on", undefined];
  // The sandbox's coins, unknown ones, blanks, 24 and 25 characters, padded, NUL.
  const SYMBOLS = ["BTC", "LTC", "ETH", "NOT_A_COIN", "", " ", " BTC ", "B".repeat(24), "B".repeat(25), "BTC\u0000", "\uFFFD"];

  it("stores a valid form whole and nothing of an invalid one, never answering 5xx", async () => {
    const current = await shopRow();
    const original = { checkoutMode: current.checkoutMode, gatewayLanguage: current.gatewayLanguage, testMode: current.testMode };
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...MODES),
          fc.constantFrom(...LANGUAGES),
          fc.constantFrom(...BOOLS),
          fc.constantFrom(...BOOLS),
          fc.constantFrom(...SYMBOLS),
          fc.oneof(fc.array(fc.constantFrom(...SYMBOLS), { maxLength: 4 }), fc.constantFrom(100, 101).map((n) => Array.from({ length: n }, () => "BTC"))),
          fc.boolean(),
          async (checkoutMode, gatewayLanguage, testMode, readOrderOnWebhook, sandboxFixed, sandboxOffered, sendVersion) => {
            const page = await getAdminPage(stack, "/app/settings");
            expect(page.status).toBe(200);
            const version = postForms(page.html).find((f) => "version" in f)?.version;
            const before = await stored();
            const form = new URLSearchParams({ checkoutMode, gatewayLanguage, sandboxFixedCurrency: sandboxFixed, liveFixedCurrency: "" });
            if (testMode !== undefined) form.append("testMode", testMode);
            if (readOrderOnWebhook !== undefined) form.append("readOrderOnWebhook", readOrderOnWebhook);
            for (const s of sandboxOffered) form.append("sandboxOfferedCurrencies", s);
            if (sendVersion && version) form.append("version", version);
            const answer = await post("/app/settings", { body: form });
            expectNo5xx(answer, form.toString().slice(0, 300));
            const after = await stored();
            if (answer.status === 200) {
              expect(after.shop.checkoutMode).toBe(checkoutMode);
              expect(after.shop.gatewayLanguage).toBe(gatewayLanguage);
            } else {
              expect(answer.status, form.toString().slice(0, 300)).toBeGreaterThanOrEqual(400);
              expect(after, form.toString().slice(0, 300)).toEqual(before);
            }
          },
        ),
        { numRuns: 80 },
      );
    } finally {
      await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { ...original, liveFixedCurrency: null, sandboxFixedCurrency: null, liveOfferedCurrencies: "[]", sandboxOfferedCurrencies: "[]" } });
    }
  }, 180_000);
});

describe("the shopper's coin pick", () => {
  async function appPagePayment() {
    await db().shop.update({ where: { shopDomain: stack.shopDomain }, data: { checkoutMode: "app_page", testMode: false } });
    const { session, delivery } = await stack.standin.state.startPayment({ test: true, locale: "en", amount: "25.00", currency: "EUR" });
    expect(delivery.status, delivery.body).toBe(200);
    const payment = await db().payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    return { payment, url: new URL(delivery.redirectUrl!) };
  }

  it("answers random and malformed picks with a 4xx and picks nothing", async () => {
    const { payment, url } = await appPagePayment();
    const before = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    const send = (init: RequestInit) => fetch(url, { method: "POST", redirect: "manual", ...init }).then(async (r) => ({ status: r.status, text: await r.text() }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom("symbol", "coin", "Symbol", "symbol[]"), fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("", "btc", " BTC", "BTC ", "BTC\u0000", "X".repeat(25)))), { maxLength: 4 }), async (pairs) => {
        const form = new URLSearchParams(pairs);
        const answer = await send({ body: form });
        expectClientError(answer, form.toString());
      }),
      { numRuns: 60 },
    );
    for (const [what, init] of [
      ["non-UTF-8", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: new Uint8Array([0x73, 0x79, 0x6d, 0x62, 0x6f, 0x6c, 0x3d, 0xff, 0xfe]) }],
      ["huge symbol", { body: new URLSearchParams({ symbol: "B".repeat(900_000) }) }],
      ["unknown then valid", { body: "symbol=NOPE&symbol=BTC", headers: { "content-type": "application/x-www-form-urlencoded" } }],
      ["a file for the symbol", { body: (() => { const f = new FormData(); f.append("symbol", new Blob(["BTC"]), "s"); return f; })() }],
    ] as [string, RequestInit][]) {
      expectClientError(await send(init), what);
    }
    expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toEqual(before);
  }, 120_000);

  it("a pick sent with another payment's link signature is refused, and neither payment changes", async () => {
    const a = await appPagePayment();
    const b = await appPagePayment();
    const [rowA, rowB] = await Promise.all([db().payment.findUniqueOrThrow({ where: { id: a.payment.id } }), db().payment.findUniqueOrThrow({ where: { id: b.payment.id } })]);
    const crossed = new URL(a.url);
    crossed.searchParams.set("sig", b.url.searchParams.get("sig")!);
    const response = await fetch(crossed, { method: "POST", body: new URLSearchParams({ symbol: "BTC" }), redirect: "manual" });
    expect(response.status).toBe(404);
    expect(await db().payment.findUniqueOrThrow({ where: { id: a.payment.id } })).toEqual(rowA);
    expect(await db().payment.findUniqueOrThrow({ where: { id: b.payment.id } })).toEqual(rowB);
  }, 60_000);

  it("the same valid coin posted several times at once makes one order, and each answer is the page (a redirect back)", async () => {
    const { payment, url } = await appPagePayment();
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => fetch(url, { method: "POST", body: new URLSearchParams({ symbol: i % 2 ? "LTC" : "BTC" }), redirect: "manual" })));
    const statuses = answers.map((a) => a.status);
    for (const s of statuses) expect([303, 409], JSON.stringify(statuses)).toContain(s);
    const row = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
    expect(row.gatewayOrderId).not.toBeNull();
    const orders = (await stack.sandboxControl(`/sandbox/orders?reference=${encodeURIComponent(payment.id)}`, undefined, "GET").catch(() => null)) as unknown;
    if (Array.isArray(orders)) expect(orders.length).toBe(1);
    // The status read of the payment page answers for it.
    const status = await fetch(new URL(`${url.pathname}/status${url.search}`, url), { redirect: "manual" });
    expect(status.status).toBe(200);
  }, 60_000);
});
