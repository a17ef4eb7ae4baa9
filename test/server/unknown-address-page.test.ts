// An address no route serves (a mistyped link, a stale bookmark, the notification URL with
// something appended) gets the app's own 404 page: what happened and nothing of how the app
// is built, in the page's shell. Nothing is written to the console for it: the request is
// logged once, by the app's logger, without the notification URL's token (webhook-token-in-page-log),
// and the router's development warning, which names the address, token and all, never fires.
import { afterEach, expect, it, vi } from "vitest";
import { stackForFile, webhookTokenOf } from "../support/stack";

const stack = stackForFile({ workers: false });

afterEach(() => {
  vi.restoreAllMocks();
});

it.each([
  ["GET", "/no-such-page"],
  ["GET", "/gateway/webhooks/{token}/x"],
  ["POST", "/gateway/webhooks/{token}/notify"],
  ["GET", "/payments/return"],
])("a %s to %s is answered with the app's own 404 page, and nothing written to the console", async (method, path) => {
  const token = await webhookTokenOf(stack());
  const consoleError = vi.spyOn(console, "error");
  const consoleWarn = vi.spyOn(console, "warn");
  const answer = await fetch(`${stack().app.url}${path.replace("{token}", token)}`, { method, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}) });
  const html = await answer.text();
  expect(answer.status).toBe(404);
  expect(answer.headers.get("content-type")).toMatch(/^text\/html/);
  expect(html).toContain("<title>Page not found</title>");
  expect(html).toContain("<h1>Page not found</h1>");
  expect(html).toContain('<html lang="en">');
  for (const developersWords of ["Unhandled Thrown Response", "Hey developer", "remix.run"]) expect(html).not.toContain(developersWords);
  expect(consoleError).not.toHaveBeenCalled();
  expect(consoleWarn).not.toHaveBeenCalled();
});

it("a request a page does not take (a POST to the home page, which has no form) is answered 405 with the app's own page", async () => {
  const consoleError = vi.spyOn(console, "error");
  const answer = await fetch(`${stack().app.url}/`, { method: "POST", body: new URLSearchParams({ anything: "1" }) });
  const html = await answer.text();
  expect(answer.status).toBe(405);
  expect(html).toContain("<title>This request could not be answered</title>");
  expect(html).toContain("<h1>This request could not be answered</h1>");
  for (const developersWords of ["Unhandled Thrown Response", "Hey developer"]) expect(html).not.toContain(developersWords);
  expect(consoleError).not.toHaveBeenCalled();
});
