// A page that answers without reading the body it was sent (a form posted to a page with no
// action, a link that leads to no payment) leaves the connection able to serve the next
// request: a client that keeps its connections alive (a load balancer) sends the next one on
// it. The client below writes each request on one raw connection, its body in pieces as a
// real network delivers it, and reads each answer's status line.
import net from "node:net";
import { expect, it } from "vitest";
import { MAX_ROUTE_BODY_BYTES } from "../../app/lib/http.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

/** The status line of each answer, in turn, on one connection; "no answer" when none came within 5 s. */
async function statusLines(requests: string[]): Promise<string[]> {
  const { hostname, port } = new URL(stack().app.url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once("connect", resolve));
  let received = "";
  let closed = false;
  socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
  socket.on("error", () => (closed = true));
  socket.on("close", () => (closed = true));
  const lines: string[] = [];
  try {
    for (const request of requests) {
      received = "";
      for (let at = 0; at < request.length && !closed; at += 16_384) {
        socket.write(request.slice(at, at + 16_384));
        await new Promise((resolve) => setImmediate(resolve));
      }
      const until = Date.now() + 5_000;
      while (!received.includes("\r\n\r\n") && !closed && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      lines.push(received.includes("\r\n") ? received.slice(0, received.indexOf("\r\n")) : closed ? "closed" : "no answer");
      // The rest of the answer (its body) arrives before the next request is written.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    socket.destroy();
  }
  return lines;
}

it.each([
  ["a page without an action", "/healthz", "405"],
  ["the payment page with a link that leads nowhere", "/pay/abcdefghijkl?sig=xxxxxxxxxxxxxxxxxxxxxxxx", "404"],
])("%s answers a large form it did not read, and the connection then serves the next request", async (_what, path, status) => {
  stack().logger.info(`unread body: POST ${path}`);
  const host = new URL(stack().app.url).host;
  const body = "x".repeat(MAX_ROUTE_BODY_BYTES);
  const lines = await statusLines([
    `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
  ]);
  expect(lines).toEqual([expect.stringMatching(new RegExp(`^HTTP/1.1 ${status} `)), "HTTP/1.1 200 OK"]);
});
