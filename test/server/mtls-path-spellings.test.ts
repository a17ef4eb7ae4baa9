// The mTLS guard (proxy mode, no verification header) in front of the real app: no spelling of
// a Shopify session path reaches its handler, and the shopper's, the gateway's and the load
// balancer's routes are never refused by the guard.
import net from "node:net";
import { expect, it } from "vitest";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { MTLS_MODE: "proxy" } });

function statusOf(target: string, method = "POST"): Promise<number> {
  const url = new URL(stack().app.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      socket.write(`${method} ${target} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    });
    let data = "";
    socket.on("data", (chunk: Buffer) => (data += chunk.toString()));
    socket.on("end", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0)));
    socket.on("error", reject);
  });
}

it("refuses every spelling of the session paths and lets the other routes through", async () => {
  const spellings = [
    "/payments/session", "/PAYMENTS/SESSION/", "/payments/session.", "/payments/session%2e", "/payments%2fsession", "//payments/session",
    "/payments/session;x", "/payments/%73ession", "/payments/session%00", "/payments/session%20", "/payments/refund/", "/payments/void?x=1",
    "/%2e/payments/session", "/payments/./session", "/payments/sess%69on/", "/payments/Capture", "/payments/session/..;/", "/payments//refund",
  ];
  const reached: string[] = [];
  for (const target of spellings) {
    const status = await statusOf(target);
    // 403 from the guard; 404/400 from a router that does not take it as a session route at all.
    if (![403, 404, 400].includes(status)) reached.push(`${target} -> ${status}`);
  }
  expect(reached).toEqual([]);
  expect(await statusOf("/payments/session")).toBe(403);
  const open = { gateway: await statusOf("/gateway/webhooks/unknown-token"), shopperReturn: await statusOf("/payments/return/p1/ok", "GET"), payPage: await statusOf("/pay/p1", "GET"), health: await statusOf("/healthz", "GET") };
  expect(open).toEqual({ gateway: 404, shopperReturn: 404, payPage: 404, health: 200 });
});
