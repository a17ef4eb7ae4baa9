// Requests carrying Remix's pre-single-fetch `?_data=` parameter, which this app never sends
// (it asks with .data paths): refused 400 with a reason before any route runs, where Remix ran
// the action and answered its refusal as a bare 200. And a request the client got wrong (a
// post to a page with no action) is not logged at error level: no one can fill the error log,
// or set off its alerts, from outside.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startStack, type Stack } from "../support/stack";

let stack: Stack;
const lines: string[] = [];

beforeAll(async () => {
  stack = await startStack({ workers: false, logLines: lines, env: { DEV_ADMIN_LOGIN: "true" } });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

function adminUrl(path: string): URL {
  const url = new URL(path, stack.app.url);
  url.searchParams.set("shop", stack.shopDomain);
  return url;
}

const errorLines = () => lines.filter((line) => (JSON.parse(line) as { level?: string }).level === "error");

it("an invalid settings form sent with ?_data= is refused with a 4xx and a reason, as without it", async () => {
  const before = await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } });
  const plain = await fetch(adminUrl("/app/settings"), { method: "POST", body: new URLSearchParams({ intent: "x" }), redirect: "manual" });
  expect(plain.status).toBe(400);
  const legacy = await fetch(adminUrl("/app/settings?_data=routes%2Fapp.settings"), { method: "POST", body: new URLSearchParams({ intent: "x" }), redirect: "manual" });
  const text = await legacy.text();
  expect({ status: legacy.status, error: (JSON.parse(text) as { error?: string }).error }).toEqual({ status: 400, error: "unsupported_data_request" });
  expect(await stack.services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack.shopDomain } })).toEqual(before);
}, 60_000);

it("an anonymous request with ?_data= on the shopper's payment page is not logged as an error", async () => {
  const already = errorLines().length;
  for (let i = 0; i < 5; i++) {
    const response = await fetch(new URL(`/pay/c${"0".repeat(24)}?sig=${"A".repeat(43)}&_data=routes%2Fpay.%24paymentId`, stack.app.url), { redirect: "manual" });
    expect(response.status).toBeLessThan(500);
    await response.text();
  }
  expect(errorLines().slice(already).map((line) => line.slice(0, 200))).toEqual([]);
}, 60_000);

it("an anonymous post to a page without an action is answered 405 and is not logged as an error", async () => {
  const already = errorLines().length;
  for (const path of ["/app/health", "/app/payments", "/healthz"]) {
    const response = await fetch(new URL(path, stack.app.url), { method: "POST", body: new URLSearchParams({ a: "b" }), redirect: "manual" });
    expect(response.status, path).toBeGreaterThanOrEqual(400);
    expect(response.status, path).toBeLessThan(500);
    await response.text();
  }
  expect(errorLines().slice(already).map((line) => line.slice(0, 200))).toEqual([]);
}, 60_000);
