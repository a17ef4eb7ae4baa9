// A stand-in for the live gateway, for tests that need both of a shop's environments: the
// tests never reach the real one, and the gateway sandbox names its coins as the sandbox
// does (USDC_POLYGON), not as the live gateway does (USDC_POLYGON_NXTB). It lists its own
// coins, creates orders (refusing a coin it does not list with a 404, as the gateway does)
// that then wait for payment, and keeps every order request it was sent.
import { randomUUID } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connectGateway } from "../../app/shops/onboarding.server";
import { startStack, type Stack, type StackOptions } from "./stack";

export const LIVE_COINS = [
  { symbol: "BTC", name: "Bitcoin BTC", min_amount: "0.05", max_amount: "20000.00", blockchain: "BTC" },
  { symbol: "ETH", name: "Ethereum ETH", min_amount: "0.05", max_amount: "20000.00", blockchain: "ETH" },
  { symbol: "USDC_POLYGON_NXTB", name: "USD Coin USDC", min_amount: "1.00", max_amount: null, blockchain: "MATIC_POLYGON" },
  { symbol: "TRX_USDC_6NU3", name: "USD Coin USDC", min_amount: "10.00", max_amount: "1200.00", blockchain: "TRX" },
] as const;

export interface LiveGatewayStandin {
  /** origin + "/api/v1", for GATEWAY_BASE_URL. */
  baseUrl: string;
  /** The bodies of the POST /orders/ it was sent, in order. */
  orders: Record<string, unknown>[];
  /** While set, GET /currencies answers 503, as a gateway that is down. */
  down: boolean;
  /** While set, orders are made in this fiat whatever the request asks, as a gateway that falls back to the device's default fiat. */
  forcedFiat: string | null;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

export async function startLiveGateway(): Promise<LiveGatewayStandin> {
  let origin = "";
  const standin: LiveGatewayStandin = {
    baseUrl: "",
    orders: [],
    down: false,
    forcedFiat: null,
    close: async () => undefined,
  };
  // The orders as GET /orders/ and GET /orders/info/{identifier} read them: waiting for payment.
  const created = new Map<string, Record<string, unknown>>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = new URL(req.url ?? "/", origin).pathname;
      if (req.method === "GET" && path === "/api/v1/currencies") {
        if (standin.down) return send(res, 503, { detail: "Service unavailable." });
        return send(res, 200, LIVE_COINS.map((coin) => ({ ...coin, image: `${origin}/media/currencies/${coin.symbol}.svg` })));
      }
      if (req.method === "GET" && path === "/api/v1/orders/") return send(res, 200, [...created.values()]);
      const info = /^\/api\/v1\/orders\/info\/([0-9a-f-]+)$/.exec(path);
      if (req.method === "GET" && info) {
        const order = created.get(info[1]!);
        return order ? send(res, 200, [order]) : send(res, 404, { detail: "Not found." });
      }
      if (req.method === "POST" && path === "/api/v1/orders/") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        standin.orders.push(body);
        const coin = LIVE_COINS.find((c) => c.symbol === body.input_currency);
        if (body.input_currency !== undefined && !coin) return send(res, 404, { detail: "Invalid currency." });
        const identifier = randomUUID();
        const now = new Date();
        const fiat = standin.forcedFiat ?? body.fiat;
        const address = coin ? `live-address-${identifier.slice(0, 8)}` : null;
        created.set(identifier, {
          identifier,
          reference: body.reference ?? null,
          created_at: now.toISOString(),
          edited_at: now.toISOString(),
          status: coin ? "PE" : "NR",
          fiat_amount: body.expected_output_amount,
          fiat,
          crypto_amount: coin ? 0.001 : null,
          unconfirmed_amount: 0,
          confirmed_amount: 0,
          received_amount: 0,
          currency_id: coin?.symbol ?? null,
          merchant_device_id: 1,
          merchant_device: "live",
          address,
          tag_memo: "",
          url_ok: body.merchant_urlok ?? null,
          url_ko: body.merchant_urlko ?? null,
          url_standby: body.merchant_url_standby ?? null,
          expired_time: coin ? new Date(now.getTime() + 15 * 60_000).toISOString() : null,
          good_fee: false,
          safe: false,
          rbf: false,
          percentage: 0,
          language: body.language ?? "ES",
          notes: body.notes ?? null,
          internal_data: body.internal_data ?? null,
          transactions: [],
        });
        const order = { identifier, reference: body.reference ?? null, web_url: `${origin}/pay/${identifier}/`, notes: body.notes ?? null, fiat, language: body.language ?? "ES" };
        if (!coin) return send(res, 200, order);
        return send(res, 200, { ...order, payment_uri: `${coin.blockchain.toLowerCase()}:${address}?amount=0.001`, address, tag_memo: "", input_currency: coin.symbol, expected_input_amount: 0.001, rate: 1 });
      }
      send(res, 404, { detail: "Not found." });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standin.baseUrl = `${origin}/api/v1`;
  standin.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return standin;
}

/**
 * A stack whose live gateway is a stand-in, with the shop's live device connected to it besides
 * the sandbox's: both environments of the shop are in use. The caller closes both.
 */
export async function startStackWithLiveGateway(options: StackOptions = {}): Promise<{ stack: Stack; live: LiveGatewayStandin }> {
  const live = await startLiveGateway();
  const stack = await startStack({ ...options, env: { GATEWAY_BASE_URL: live.baseUrl, ...options.env } });
  const connected = await connectGateway(stack.services, stack.shopDomain, { env: "live", deviceKey: randomUUID(), secretKeyHex: "5e".repeat(32) });
  if (!connected.ok) throw new Error(`could not connect the live stand-in: ${connected.message}`);
  return { stack, live };
}
