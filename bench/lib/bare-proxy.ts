// The floor for the app's payment-session work: a bare node:http server that takes the
// same Shopify payment session POST, makes the one gateway call the app must make
// (POST /orders/ to the sandbox) and answers {redirect_url}. No validation, no database.
import { createServer } from "node:http";
import { serveParent } from "./child-process";
import { listenOnLoopback } from "./loopback";

export interface BareProxyConfig {
  sandboxBaseUrl: string;
  deviceKey: string;
}

serveParent<BareProxyConfig, { url: string }>(async ({ sandboxBaseUrl, deviceKey }) => {
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const session = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string; amount: string; currency: string };
      const created = await fetch(`${sandboxBaseUrl}/orders/`, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Device-Id": deviceKey },
        body: JSON.stringify({
          expected_output_amount: session.amount,
          fiat: session.currency,
          reference: session.id,
          merchant_urlok: "http://127.0.0.1/ok",
          merchant_urlko: "http://127.0.0.1/ko",
        }),
      });
      const order = (await created.json()) as { web_url?: string };
      res.writeHead(created.ok ? 200 : 502, { "content-type": "application/json" });
      res.end(JSON.stringify({ redirect_url: order.web_url ?? null }));
    } catch (error) {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: String(error) }));
    }
  });
  const { url, close } = await listenOnLoopback(server);
  return { info: { url }, handlers: {}, stop: close };
});
