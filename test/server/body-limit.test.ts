// Bodies sent to the Remix routes (the merchant's login and admin forms, Shopify's webhooks)
// are bounded: a body declared larger than MAX_ROUTE_BODY_BYTES is answered 413 before any of
// it is read, and one streamed without a length is answered 411 (browsers and Shopify send
// every such body with its length), so no body is read past its declared length. The client
// below sends part of its body and then waits: an answer can only come from a server that
// refused without waiting for the rest.
import { createHmac, randomUUID } from "node:crypto";
import http from "node:http";
import { expect, it } from "vitest";
import { MAX_ROUTE_BODY_BYTES } from "../../app/lib/http.server";
import { stackForFile, TEST_SHOP } from "../support/stack";

const stack = stackForFile({ workers: false });

const CHUNK = Buffer.alloc(64 * 1024, 0x61);

interface Answer {
  status: number;
  body: string;
  /** Bytes of the body the client had sent when the answer came. */
  sentBytes: number;
}

/**
 * POSTs `sendBytes` of a body to `path` and then waits, without ending it, for the answer (or
 * gives up after 15 s). With `declaredBytes` the body is declared that long (Content-Length);
 * without, it is streamed in chunks.
 */
function sendAndWait(path: string, options: { contentType: string; sendBytes: number; declaredBytes?: number; headers?: Record<string, string> }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    const request = http.request(new URL(path, stack().app.url), {
      method: "POST",
      headers: {
        "content-type": options.contentType,
        ...(options.declaredBytes === undefined ? {} : { "content-length": String(options.declaredBytes) }),
        ...options.headers,
      },
    });
    const giveUp = setTimeout(() => {
      request.destroy();
      reject(new Error(`no answer after ${sent} bytes were sent`));
    }, 15_000);
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      const sentBytes = sent;
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        clearTimeout(giveUp);
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), sentBytes });
      });
    });
    request.on("error", (error) => {
      clearTimeout(giveUp);
      reject(error);
    });
    request.flushHeaders();
    const pump = () => {
      while (sent < options.sendBytes) {
        const chunk = CHUNK.subarray(0, Math.min(CHUNK.length, options.sendBytes - sent));
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once("drain", pump);
      }
    };
    pump();
  });
}

const webhookHeaders = (topic: string) => ({
  "x-shopify-topic": topic,
  "x-shopify-shop-domain": TEST_SHOP,
  "x-shopify-hmac-sha256": "bm90LWEtcmVhbC1obWFj",
  "x-shopify-webhook-id": randomUUID(),
  "x-shopify-api-version": "2026-04",
});

const ROUTES: [string, string, Record<string, string>][] = [
  ["/auth/login", "application/x-www-form-urlencoded", {}],
  ["/webhooks/app/uninstalled", "application/json", webhookHeaders("app/uninstalled")],
  ["/webhooks/customers/redact", "application/json", webhookHeaders("customers/redact")],
  ["/app/settings", "application/x-www-form-urlencoded", {}],
];

function expectRefused(answer: Answer) {
  expect(answer.status).toBe(413);
  expect(JSON.parse(answer.body)).toEqual({ error: "body_too_large", message: `The body must be at most ${MAX_ROUTE_BODY_BYTES} bytes.` });
}

it.each(ROUTES)("%s answers a body declared past the limit with a 413 before the body is sent", async (path, contentType, headers) => {
  const declaredBytes = MAX_ROUTE_BODY_BYTES + 4 * 1024 * 1024;
  const answer = await sendAndWait(path, { contentType, headers, declaredBytes, sendBytes: CHUNK.length });
  expectRefused(answer);
  expect(answer.sentBytes).toBeLessThan(declaredBytes);
});

it.each(ROUTES.slice(0, 3))("%s answers a body streamed without a length with a 411 before the body is sent", async (path, contentType, headers) => {
  // The body never ends: only a refusal made before reading it can answer.
  const answer = await sendAndWait(path, { contentType, headers, sendBytes: CHUNK.length });
  expect(answer.status).toBe(411);
  expect(JSON.parse(answer.body)).toEqual({ error: "length_required", message: "Send the body with its Content-Length." });
});

it("a webhook with a large legitimate body (a data request naming 25,000 orders: no fixed count bounds them, the body limit does) is taken", async () => {
  const body = JSON.stringify({
    shop_id: 1,
    shop_domain: TEST_SHOP,
    customer: { id: 99, email: "many.orders@example.com", phone: null },
    orders_requested: Array.from({ length: 25_000 }, (_, index) => 5_000_000_000_000 + index),
    data_request: { id: 11 },
  });
  expect(body.length).toBeGreaterThan(100_000);
  const response = await fetch(`${stack().app.url}/webhooks/customers/data_request`, {
    method: "POST",
    body,
    headers: {
      ...webhookHeaders("customers/data_request"),
      "content-type": "application/json",
      "x-shopify-hmac-sha256": createHmac("sha256", stack().env.SHOPIFY_API_SECRET).update(body).digest("base64"),
    },
  });
  expect(response.status).toBe(200);
  expect(await stack().services.db.customerDataRequest.count()).toBe(1);
});

it("a connection whose body was refused a little past the limit takes the next request", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const post = (bytes: number) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request(new URL("/auth/login", stack().app.url), { method: "POST", agent, headers: { "content-type": "application/x-www-form-urlencoded" } }, (response) => {
          response.resume();
          response.on("end", () => resolve(response.statusCode ?? 0));
        });
        request.on("error", reject);
        request.end(Buffer.alloc(bytes, 0x61));
      });
    expect(await post(MAX_ROUTE_BODY_BYTES + 1)).toBe(413);
    expect(await post(16)).toBeLessThan(500);
  } finally {
    agent.destroy();
  }
});
