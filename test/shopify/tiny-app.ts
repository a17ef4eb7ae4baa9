// A tiny stand-in for the payments app, for tests of the Shopify stand-in: it records
// what Shopify sends, answers payment sessions with a redirect to its own "payment page",
// accepts refunds with 201, and on that page can settle the session through the real
// Payments Apps client, then send the buyer to Shopify's nextAction URL.

import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPaymentsAppsClient, type PaymentsAppsClient } from "~/shopify/payments-apps";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface TinyApp {
  origin: string;
  received: ReceivedRequest[];
  /** How the next payment session POSTs are answered. */
  mode: "redirect" | "fail" | "bad_redirect";
  connect(payments: { endpoint: string; shopDomain: string; accessToken: string }): void;
  close(): Promise<void>;
}

export async function startTinyApp(): Promise<TinyApp> {
  const received: ReceivedRequest[] = [];
  const sessions = new Map<string, string>(); // payment session id -> gid
  let client: PaymentsAppsClient | null = null;
  let origin = "";

  const app: TinyApp = {
    origin: "",
    received,
    mode: "redirect",
    connect: (payments) => {
      client = createPaymentsAppsClient(payments);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const path = new URL(req.url ?? "/", origin).pathname;
        let body: unknown = text;
        if ((req.headers["content-type"] ?? "").startsWith("application/json")) body = JSON.parse(text) as unknown;
        received.push({ method: req.method ?? "", path, headers: req.headers, body });

        if (req.method === "POST" && path === "/payments/session") {
          const session = body as { id: string; gid: string };
          sessions.set(session.id, session.gid);
          if (app.mode === "fail") {
            res.writeHead(500, { "Content-Type": "application/json" });
            res.end(JSON.stringify({ error: "gateway unavailable" }));
            return;
          }
          const redirectUrl = app.mode === "bad_redirect" ? "javascript:alert(1)" : `${origin}/pay/${session.id}`;
          res.writeHead(200, { "Content-Type": "application/json" });
          res.end(JSON.stringify({ redirect_url: redirectUrl }));
          return;
        }
        if (req.method === "POST" && /^\/payments\/(refund|capture|void)$/.test(path)) {
          res.writeHead(201);
          res.end();
          return;
        }
        const page = /^\/pay\/([^/]+)$/.exec(path);
        if (req.method === "GET" && page) {
          res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
          res.end(`<!doctype html><title>Pay with crypto</title><h1>Pay with crypto</h1>
<form method="post" action="/pay/${page[1]}/paid"><button type="submit">I have paid</button></form>`);
          return;
        }
        const paid = /^\/pay\/([^/]+)\/paid$/.exec(path);
        if (req.method === "POST" && paid && client) {
          const gid = sessions.get(paid[1] ?? "");
          const result = gid ? await client.resolvePaymentSession(gid) : null;
          if (result?.isOk() && result.value.redirectUrl) {
            res.writeHead(303, { Location: result.value.redirectUrl });
            res.end();
            return;
          }
          res.writeHead(500);
          res.end("could not settle");
          return;
        }
        res.writeHead(404);
        res.end();
      })().catch(() => {
        res.writeHead(500);
        res.end();
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  app.origin = origin;
  return app;
}
