// One Payments Apps endpoint for several Shopify stand-ins (one per simulated shop): the
// app's endpoint template has {shop} in the path, and this router forwards each call to
// that shop's stand-in.
import { createServer, request as httpRequest } from "node:http";
import { listenOnLoopback } from "./loopback";

export async function startShopRouter(origins: Map<string, string>): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const shop = /^\/([^/]+)\/payments_apps\//.exec(req.url ?? "")?.[1];
    const origin = shop ? origins.get(shop) : undefined;
    if (!origin) {
      res.writeHead(404).end();
      return;
    }
    const target = new URL(origin);
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  return listenOnLoopback(server);
}
