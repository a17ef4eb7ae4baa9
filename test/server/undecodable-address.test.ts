// A path that is not valid percent-encoding (a stray "%", a cut-off UTF-8 sequence) names
// nothing the app serves. It is refused with a 400 in plain words before any router, on every
// path (the notification URL, the API, the pages, the static files), in any method: no stack
// in the answer, and the path (which may hold a shop's notification token) neither in the
// app's log nor on the console.
import { afterEach, expect, it, vi } from "vitest";
import { watchConsole } from "../support/console";
import { stackForFile, webhookTokenOf } from "../support/stack";

const lines: string[] = [];
const stack = stackForFile({ workers: false, logLines: lines, env: { DEV_ADMIN_LOGIN: "true" } });

afterEach(() => vi.restoreAllMocks());

const PATHS = [
  "/gateway/webhooks/{token}%E0%A4%A",
  "/gateway/webhooks/{token}/%E0%A4%A",
  "/api/shopify/payment-session/%E0",
  "/app/payments/%E0%A4%A",
  "/pay/%C3",
  "/%E0%A4%A",
  "/assets/%E0%A4%A.js",
  "/healthz/%",
];

it.each(PATHS.flatMap((path) => [["GET", path] as const, ["POST", path] as const]))("a %s to %s is answered 400 in plain words, and logged without its path", async (method, path) => {
  const token = await webhookTokenOf(stack());
  const printed = watchConsole();
  const before = lines.length;
  const answer = await fetch(`${stack().app.url}${path.replace("{token}", token)}?shop=${stack().shopDomain}`, {
    method,
    ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}),
  });
  const body = await answer.text();
  expect(answer.status).toBe(400);
  expect(answer.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  expect(answer.headers.get("cache-control")).toBe("no-store");
  expect(body).toBe("Bad Request: the address is not valid percent-encoding.\n");

  const written = lines.slice(before);
  const refused = written.filter((line) => line.includes("Request refused")).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(refused).toEqual([{ time: expect.any(String), level: "info", msg: "Request refused", method, status: 400, reason: "the path is not valid percent-encoding" }]);
  expect(written.filter((line) => line.includes(token) || line.includes("%E0"))).toEqual([]);
  expect(printed()).toEqual([]);
});

it("a path that decodes, with an undecodable query, still reaches its page, and nothing is written to the console", async () => {
  const printed = watchConsole();
  const answer = await fetch(`${stack().app.url}/app/payments?shop=${stack().shopDomain}&after=%E0%A4%A`);
  expect(answer.status).toBe(200);
  expect(await answer.text()).toContain("Payments");
  expect(printed()).toEqual([]);
});
