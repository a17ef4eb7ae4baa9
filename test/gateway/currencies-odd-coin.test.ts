// GET /currencies is read coin by coin, as the order listing is: one coin the schema cannot
// read (a new coin without an icon yet, which DRF's ImageField answers as null; or an icon given
// as a relative "/media/..." path) is set aside, and the others are still offered. Read
// all-or-nothing, that one coin took every payment page's coin choice, every device connection
// (whose key check reads the list) and the saving of offered coins with it.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGatewayClient } from "../../app/gateway/client";
import { json, startScriptedServer, type ScriptedServer } from "../gateway/support/scripted-server";
import { fixtureJson } from "../gateway/support/fixtures";

const DEVICE_KEY = "6c9bb3c5-7d3a-4f1e-9b2a-1f0c8d7e6a5b";
const catalogue = fixtureJson<{ body: Record<string, unknown>[] }>("currencies.sandbox.2024-01.BGMiralles.json").body;

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => {
  await server.close();
});

function client() {
  return createGatewayClient({
    baseUrl: `${server.origin}/api/v1`,
    deviceKey: DEVICE_KEY,
    timeoutMs: 2_000,
    retry: { maxAttempts: 1 },
    sleep: async () => {},
  });
}

describe("GET /currencies with one coin the schema cannot read", () => {
  it.each([
    ["a coin without an icon (image: null)", { image: null }],
    ["a coin whose icon is a relative path", { image: "/media/crytocurrencies/CurrencySOL_Size36_px.png" }],
  ])("%s does not make the other coins unreadable", async (_label, odd) => {
    const newCoin = { blockchain: "SOL_TEST", max_amount: "20000.00", min_amount: "0.05", name: "Solana Test SOL", symbol: "SOL_TEST", ...odd };
    server.script(json(200, [...catalogue, newCoin]));
    const result = await client().currencies();
    // The app never shows the icon: the new coin is offered too, without one.
    expect(result.isOk(), result.isErr() ? result.error.message : "").toBe(true);
    const coins = result._unsafeUnwrap();
    expect(coins.map((c) => c.symbol)).toEqual([...catalogue.map((c) => c.symbol), "SOL_TEST"]);
    expect(coins.find((c) => c.symbol === "SOL_TEST")?.image).toBeNull();
  });

  it("a coin with an amount that is no number is set aside and the others are offered; a list of which no coin can be read is refused", async () => {
    const broken = { blockchain: "SOL_TEST", max_amount: "20000.00", min_amount: "about five", name: "Solana Test SOL", symbol: "SOL_TEST", image: null };
    server.script(json(200, [...catalogue, broken]));
    const result = await client().currencies();
    expect(result._unsafeUnwrap().map((c) => c.symbol)).toEqual(catalogue.map((c) => c.symbol));

    server.script(json(200, [broken, { ...broken, symbol: "DOT_TEST" }]));
    const none = await client().currencies();
    expect(none.isErr() && none.error.kind).toBe("invalid_response");
    expect(none.isErr() && none.error.message).toContain("none of the 2 coins could be read");
  });
});
