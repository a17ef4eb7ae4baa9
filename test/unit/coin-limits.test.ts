// Which coins the app's payment page offers for a payment's amount. The gateway states each
// coin's limits in euros: they are compared for a payment in euros, inclusive at both ends. In
// any other fiat the gateway's refusal of a coin for the amount, told apart from its other
// refusals, rules out that coin and every coin whose limit the amount is past as well. And the
// gateway's words for a refusal as the app keeps and shows them: one line of plain text,
// without the shopper's details.
import { describe, expect, it } from "vitest";
import type { GatewayCurrency } from "../../app/gateway/schemas";
import { amountLimitIn, offerableCoins, refusedSymbols, withinLimits } from "../../app/payment-page/coins";
import { gatewayCause, personalDetails } from "../../app/payments/start-payment-session";

const coin = (symbol: string, min_amount: string, max_amount: string | null): GatewayCurrency => ({
  symbol,
  name: symbol,
  min_amount,
  max_amount,
  image: "https://gateway.example/coin.png",
  blockchain: symbol,
});

// As the gateway sandbox lists them (limits in euros).
const CURRENCIES = [
  coin("BTC", "0.05", "20000.00"),
  coin("BTCL", "0.01", "1000.00"),
  coin("USDC_ERC20", "10.00", null),
  coin("USDC_POLYGON", "1.00", null),
  coin("USDT_TRC20", "1.00", "10000.00"),
  coin("USDT_ERC20", "10.00", null),
  coin("XRP", "0.01", "20000.00"),
];
const symbols = (coins: { symbol: string }[]) => coins.map((c) => c.symbol);

describe("coin limits for a payment in euros", () => {
  const limited = { min_amount: "10.00", max_amount: "1000.00" };

  it("are inclusive at both ends", () => {
    expect(withinLimits(limited, "10.00", "EUR")).toBe(true);
    expect(withinLimits(limited, "9.99", "EUR")).toBe(false);
    expect(withinLimits(limited, "1000.00", "EUR")).toBe(true);
    expect(withinLimits(limited, "1000.01", "EUR")).toBe(false);
    expect(withinLimits({ min_amount: "1.00", max_amount: null }, "99999999.99", "EUR")).toBe(true);
  });

  it("are not compared for another fiat, whose amount they are not stated in", () => {
    expect(withinLimits(limited, "5.00", "USD")).toBe(true);
    expect(withinLimits(limited, "1", "JPY")).toBe(true);
  });
});

describe("the gateway's refusal of a coin for an amount", () => {
  it.each([
    ["Amount 5.00 USD is below the minimum amount of 10.80 USD for USDC_ERC20.", "below_min"],
    ["Amount is below the minimum for ETH_TEST3", "below_min"],
    ["Amount 25000.00 EUR is above the maximum amount of 20000.00 EUR for BTC.", "above_max"],
    ["expected_output_amount must be between min_amount and max_amount", "outside_limits"],
    ["El importe 5.00 USD es inferior al importe mínimo de 10.80 USD para USDC_ERC20.", "below_min"],
    ["El importe supera el maximo permitido para BTC.", "above_max"],
  ])("%s → %s", (reason, limit) => {
    expect(amountLimitIn(reason)).toBe(limit);
  });

  it.each([
    ['Currency "BTX" not found. Use a symbol from GET /currencies (one of 14 available).'],
    ["merchant_urlok is not a valid absolute http(s) URL."],
    ["Identity documents are required for this amount."],
    [""],
    [null],
  ])("%s is no refusal of the amount: it rules out no coin", (reason) => {
    expect(amountLimitIn(reason)).toBeNull();
  });
});

describe("the coins a refusal rules out", () => {
  it("an amount below a coin's minimum is below every minimum as high or higher", () => {
    const out = refusedSymbols(CURRENCIES, [{ symbol: "USDC_POLYGON", limit: "below_min" }]);
    expect([...out].sort()).toEqual(["USDC_ERC20", "USDC_POLYGON", "USDT_ERC20", "USDT_TRC20"]);
    expect(symbols(offerableCoins(CURRENCIES, [], "0.50", "USD", [{ symbol: "USDC_POLYGON", limit: "below_min" }]))).toEqual(["BTC", "BTCL", "XRP"]);
  });

  it("an amount above a coin's maximum is above every maximum as low or lower; a coin without one stays", () => {
    const out = refusedSymbols(CURRENCIES, [{ symbol: "USDT_TRC20", limit: "above_max" }]);
    expect([...out].sort()).toEqual(["BTCL", "USDT_TRC20"]);
  });

  it("a refusal that does not say which limit rules out its own coin only, and the shop's choice still applies", () => {
    expect(symbols(offerableCoins(CURRENCIES, ["BTC", "XRP", "USDC_ERC20"], "10", "USD", [{ symbol: "XRP", limit: "outside_limits" }]))).toEqual(["BTC", "USDC_ERC20"]);
    // Nor does one that names no limit at all.
    expect(symbols(offerableCoins(CURRENCIES, ["BTC", "XRP", "USDC_ERC20"], "10", "USD", [{ symbol: "BTC", limit: "none_named" }]))).toEqual(["USDC_ERC20", "XRP"]);
  });

  it("once the lowest minimum was refused, no coin is left", () => {
    const refused = [
      { symbol: "BTC", limit: "below_min" as const },
      { symbol: "BTCL", limit: "below_min" as const },
    ];
    expect(offerableCoins(CURRENCIES, [], "1", "JPY", refused)).toEqual([]);
  });

  it("a coin the gateway no longer lists is still left out, and rules out nothing else", () => {
    expect(symbols(offerableCoins(CURRENCIES, [], "5.00", "USD", [{ symbol: "GONE", limit: "below_min" }]))).toEqual(symbols(CURRENCIES));
  });
});

describe("the gateway's words for a refusal, as kept and shown", () => {
  it("are one line of plain text", () => {
    expect(gatewayCause("Amount 5.00 USD is below\nthe minimum\u0000 amount\u200b of 10.80 USD.")).toBe("Amount 5.00 USD is below the minimum amount of 10.80 USD.");
  });

  it("leave out the shopper's details the order carried, and anything shaped like an e-mail address", () => {
    const cause = gatewayCause("Customer Ann Example (ANN@example.com, +34600111222) at Calle Mayor 1 is not verified; write to other.person@mail.example", [
      "Ann Example",
      "ann@example.com",
      "+34600111222",
      "Calle Mayor 1",
    ]);
    expect(cause).toBe("Customer [removed] ([removed], [removed]) at [removed] is not verified; write to [removed]");
  });

  it("leave out each of the shopper's details an order carries: name and its parts, e-mail, phone, address, city, province and postcode", () => {
    const customer = {
      email: "ana.ejemplo@example.com",
      phone_number: "+34 600 111 222",
      billing_address: { given_name: "Anabel", family_name: "Ejemplo", line1: "Calle Mayor 1", line2: "Piso 3", city: "Valladolid", province: "Castilla", postal_code: "47001", country_code: "ES" },
    } as Parameters<typeof personalDetails>[0];
    const cause = gatewayCause("Anabel Ejemplo: Ejemplo, Anabel lives at Calle Mayor 1, Piso 3, 47001 Valladolid (Castilla); call +34600111222", personalDetails(customer));
    expect(cause).toBe("[removed]: [removed], [removed] lives at [removed], [removed], [removed] [removed] ([removed]); call [removed]");
  });

  it("leave out a detail as a whole word only: a name inside a longer word is not the name", () => {
    expect(gatewayCause("Maxim: above the maximum amount of 4000.00 EUR (MAXIM)", ["Maxim"])).toBe("[removed]: above the maximum amount of 4000.00 EUR ([removed])");
    expect(gatewayCause("Sent by Mini from 28014-ES; minimum 10.80 USD", ["Mini", "28014"])).toBe("Sent by [removed] from [removed]-ES; minimum 10.80 USD");
  });

  it("are cut to 300 characters; nothing given is none", () => {
    expect(gatewayCause("x".repeat(2000))).toHaveLength(300);
    expect(gatewayCause(null)).toBeNull();
    expect(gatewayCause("")).toBeNull();
    expect(gatewayCause(" \n ")).toBeNull();
  });
});
