// The project's own gateway client, unchanged but for the base URL, against the
// sandbox: every endpoint, its typed errors, and the "outcome unknown" path of
// a create whose answer is lost after the order was made.
import { beforeAll, describe, expect, it } from "vitest";
import { createGatewayClient } from "../../app/gateway/client.js";
import { gatewayCustomerFields } from "../../app/payments/customer-fields.js";
import { action, client, newMerchant, type NewMerchant, sandboxForThisFile } from "./helpers.js";

const t = sandboxForThisFile();
let merchant: NewMerchant;

beforeAll(async () => {
  merchant = await newMerchant(t.sandbox, "Client shop");
});

function gateway(deviceKey = merchant.key) {
  return createGatewayClient({
    baseUrl: t.sandbox.baseUrl,
    deviceKey,
    timeoutMs: 5_000,
    retry: { maxAttempts: 1 },
    clock: () => t.clock.now(),
  });
}

describe("the project's gateway client against the sandbox", () => {
  it("GET /currencies", async () => {
    const r = await gateway().currencies();
    expect(r.isOk()).toBe(true);
    const list = r._unsafeUnwrap();
    expect(list.map((c) => c.symbol)).toEqual(expect.arrayContaining(["BTC", "BTCL", "USDT_TRC20", "XRP"]));
  });

  it("POST /device/ gives a key the client can use", async () => {
    const r = await gateway().createDevice("till-1");
    expect(r.isOk()).toBe(true);
    const created = r._unsafeUnwrap();
    expect(created.name).toBe("till-1");
    expect((await gateway(created.identifier).currencies()).isOk()).toBe(true);
  });

  it("POST /orders/ (variant A and B), GET /orders/info and GET /orders/ through a whole payment", async () => {
    const gw = gateway();
    const a = await gw.createOrder({
      expected_output_amount: "19.99",
      input_currency: "USDT_TRC20",
      fiat: "EUR",
      reference: "CLIENT-1",
      language: "EN",
      email_client: "shopper@example.com",
      country: "ES",
    });
    expect(a.isOk()).toBe(true);
    const createdA = a._unsafeUnwrap();
    expect("payment_uri" in createdA && createdA.payment_uri.startsWith("tron:")).toBe(true);

    const b = await gw.createOrder({
      expected_output_amount: "5.00",
      fiat: "EUR",
      merchant_urlok: "https://shop.example/ok",
      merchant_urlko: "https://shop.example/ko",
    });
    expect(b.isOk()).toBe(true);
    expect("payment_uri" in b._unsafeUnwrap()).toBe(false);

    await action(t.sandbox, createdA.identifier, { action: "pay", amount: "exact" });
    await action(t.sandbox, createdA.identifier, { action: "confirm" });
    const order = (await gw.orderInfo(createdA.identifier))._unsafeUnwrap();
    expect(order.status).toMatchObject({ known: true, code: "CO" });
    expect(order.reference).toBe("CLIENT-1");
    expect(order.confirmed_amount).toBe(order.crypto_amount);
    expect(order.transactions).toHaveLength(1);

    const today = t.clock.now();
    const list = (await gw.listOrders({ start: today, end: today }))._unsafeUnwrap();
    expect(list.orders.map((o) => o.identifier)).toEqual([b._unsafeUnwrap().identifier, createdA.identifier]);
    expect(list.unreadable).toEqual([]);
  });

  it("reads tiny amounts that the service writes in exponent form", async () => {
    const gw = gateway();
    const created = (await gw.createOrder({ expected_output_amount: "1.00", input_currency: "BTC", fiat: "EUR" }))._unsafeUnwrap();
    const order = (await gw.orderInfo(created.identifier))._unsafeUnwrap();
    expect(order.crypto_amount).toMatch(/^0\.0000\d+$/);
    const raw = await client(t.sandbox).api("GET", `/orders/info/${created.identifier}`, { key: merchant.key });
    expect(raw.text).toMatch(/"crypto_amount":\d\.\d+e-05/);
  });

  it("maps the sandbox's errors to the client's typed errors", async () => {
    const gw = gateway();
    const wrongCase = await gw.createOrder({ expected_output_amount: "5.00", input_currency: "btc", fiat: "EUR" });
    expect(wrongCase.isErr() && wrongCase.error.kind).toBe("rejected");
    expect(wrongCase.isErr() && "detail" in wrongCase.error && wrongCase.error.detail).toMatch(/case-sensitive/);
    const missing = await gw.orderInfo("0b7c2b8e-5f0e-4a4c-9d1e-6f3a2b1c0d9e");
    expect(missing.isErr() && missing.error.kind).toBe("not_found");
    const stranger = await gateway("3f1c2a4b-5d6e-4f70-8a9b-0c1d2e3f4a5b").currencies();
    expect(stranger.isErr() && stranger.error.kind).toBe("unauthorized");
  });

  it("reports an unknown outcome when the answer to a create is lost, and the order can be found by reference", async () => {
    const gw = gateway();
    await client(t.sandbox).control("POST", "/faults", { endpoint: "orders.create", kind: "http_500", count: 1, after_create: true });
    const r = await gw.createOrder({ expected_output_amount: "8.00", input_currency: "LTC", fiat: "EUR", reference: "LOST-1" });
    expect(r.isErr() && r.error.kind).toBe("outcome_unknown");
    const list = (await gw.listOrders())._unsafeUnwrap();
    expect(list.orders.filter((o) => o.reference === "LOST-1")).toHaveLength(1);
  });

  // Django's EmailValidator refuses a domain label that ends in "-" or runs past 63 characters;
  // the customer's address is optional to the gateway, so it is left out and the order made.
  it.each(["shopper@mail-.com", `shopper@${"a".repeat(64)}.com`])("a shopper's e-mail the gateway refuses (%s) is left out, and the order is created", async (email) => {
    const fields = gatewayCustomerFields({ email, billing_address: { given_name: "Ana", family_name: "Ruiz", country_code: "ES" } });
    expect(fields).toEqual({ full_name: "Ana Ruiz", country: "ES" });
    const created = await gateway().createOrder({ expected_output_amount: "25.00", input_currency: "BTC", fiat: "EUR", reference: "EMAIL-1", ...fields });
    expect(created.isOk() ? "created" : `${created.error.kind}: ${created.error.message}`).toBe("created");
  });

  it("an order the sandbox refuses field by field (DRF's 400 body) comes back with the field and its message", async () => {
    // Valid for the client's schema (positive, two decimals, 11 significant digits); the
    // sandbox's DecimalField (max_digits 12, decimal_places 2) answers {"expected_output_amount": ["..."]}.
    const created = await gateway().createOrder({ expected_output_amount: "12345678901.00", input_currency: "BTC", fiat: "EUR" });
    const error = created._unsafeUnwrapErr();
    expect(error.kind).toBe("rejected");
    expect(error.kind === "rejected" ? error.detail : "not rejected").toBe(
      "expected_output_amount: Ensure that there are no more than 10 digits before the decimal point.",
    );
  });

  it("surfaces a throttle as a typed error with the Retry-After", async () => {
    await client(t.sandbox).control("POST", "/faults", { endpoint: "currencies", kind: "http_429", count: 1 });
    const r = await gateway().currencies();
    expect(r.isErr() && r.error.kind).toBe("throttled");
  });
});
