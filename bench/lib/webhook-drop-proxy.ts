// Stands between the gateway sandbox and the app's webhook route and loses the
// notifications its caller says are lost (a fixed share, drawn at random), as the real
// gateway's unretried webhooks get lost. Forwarded ones are signed again with a nonce in simulated time: the sandbox signs
// with the real time, while the app checks freshness against its (simulated) clock.
import { createServer, request as httpRequest } from "node:http";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { listenOnLoopback } from "./loopback";

export interface DropProxyStats {
  arrived: number;
  dropped: number;
  forwarded: number;
  accepted: number;
  refused: number;
  inFlight: number;
  byStatus: Record<string, { arrived: number; dropped: number }>;
}

export interface DropProxy {
  url: string;
  stats: DropProxyStats;
  close(): Promise<void>;
}

export async function startWebhookDropProxy(options: {
  appUrl: string;
  /** Whether the notification about this order's new status is lost. */
  lose: (orderIdentifier: string, status: string) => boolean;
  /** Secret Key by webhook token (the path segment of the shop's notification URL). */
  secrets: Map<string, string>;
  nowMs: () => number;
}): Promise<DropProxy> {
  const app = new URL(options.appUrl);
  const stats: DropProxyStats = { arrived: 0, dropped: 0, forwarded: 0, accepted: 0, refused: 0, inFlight: 0, byStatus: {} };
  const server = createServer(async (req, res) => {
    stats.inFlight++;
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const token = /^\/gateway\/webhooks\/([^/?]+)/.exec(req.url ?? "")?.[1] ?? "";
      let status = "unknown";
      let identifier = "";
      try {
        const parsed = JSON.parse(body.toString("utf8")) as { status?: unknown; identifier?: unknown };
        status = String(parsed.status);
        identifier = String(parsed.identifier);
      } catch {
        // Counted as "unknown": the app decides what a malformed body gets.
      }
      const tally = (stats.byStatus[status] ??= { arrived: 0, dropped: 0 });
      stats.arrived++;
      tally.arrived++;
      if (options.lose(identifier, status)) {
        stats.dropped++;
        tally.dropped++;
        res.writeHead(503).end();
        return;
      }
      const secret = options.secrets.get(token);
      const nonce = String(Math.floor(options.nowMs() / 1000));
      const headers = { "content-type": "application/json", "content-length": String(body.length), "x-nonce": nonce, "x-signature": secret ? signWebhook({ secretHex: secret, nonce, rawBody: body }) : "0".repeat(64) };
      stats.forwarded++;
      const answer = await new Promise<number>((resolve) => {
        const forward = httpRequest({ host: app.hostname, port: app.port, method: "POST", path: req.url, headers }, (r) => {
          r.resume();
          r.on("end", () => resolve(r.statusCode ?? 0));
        });
        forward.on("error", () => resolve(0));
        forward.end(body);
      });
      if (answer === 200) stats.accepted++;
      else stats.refused++;
      res.writeHead(answer || 502).end();
    } finally {
      stats.inFlight--;
    }
  });
  return { ...(await listenOnLoopback(server)), stats };
}
