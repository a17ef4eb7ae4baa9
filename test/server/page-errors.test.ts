// An error a page's loader or action throws is logged through the app's logger (which scrubs
// secrets, and whose lines every stack checks for them), not printed by Remix's console.error.
import { afterEach, expect, it, vi } from "vitest";
import { stackForFile } from "../support/stack";

const lines: string[] = [];
const stack = stackForFile({ workers: false, logLines: lines, env: { DEV_ADMIN_LOGIN: "true" } });

afterEach(() => vi.restoreAllMocks());

it("a request a page cannot take is answered and logged by the app's logger as information, with its method, path and status, and nothing on the console", async () => {
  const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
  // The payments list has no action: Remix answers 405 and reports it; the client's doing, not an error.
  const answer = await fetch(`${stack().app.url}/app/payments?shop=${stack().shopDomain}`, { method: "POST", body: new URLSearchParams({ anything: "1" }) });
  expect(answer.status).toBe(405);
  const logged = lines.filter((line) => line.includes("Page request refused")).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(logged).toEqual([expect.objectContaining({ level: "info", method: "POST", path: "/app/payments", status: 405 })]);
  expect(lines.filter((line) => line.includes("Page request failed"))).toEqual([]);
  expect(printed).not.toHaveBeenCalled();
});

it("the shopper's payment page that fails unexpectedly says so in the browser's language, and is logged once by the app's logger", async () => {
  const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const page = stack().services.links.paymentPageUrl(payment);
  vi.spyOn(stack().services.links, "verify").mockImplementation(() => {
    throw new Error("the link check failed");
  });
  const before = lines.length;
  const answer = await fetch(page, { headers: { "accept-language": "es-ES,es;q=0.9,en;q=0.5" } });
  expect(answer.status).toBe(500);
  const html = await answer.text();
  expect(html).toContain("La página de pago no se puede mostrar en este momento.");
  expect(html).toContain('lang="es"');
  const logged = lines.slice(before).filter((line) => line.includes("Page request failed")).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(logged).toEqual([expect.objectContaining({ level: "error", method: "GET", path: new URL(page).pathname })]);
  expect(printed).not.toHaveBeenCalled();
});

it("the shopper's return link that fails unexpectedly answers a page that checks again by itself, in the browser's language, telling a shopper who paid not to pay again; logged once", async () => {
  const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const back = stack().services.links.returnUrl(payment, "ok");
  vi.spyOn(stack().services.links, "verify").mockImplementation(() => {
    throw new Error("the link check failed");
  });
  const before = lines.length;
  const answer = await fetch(back, { headers: { "accept-language": "es-ES,es;q=0.9,en;q=0.5" }, redirect: "manual" });
  expect(answer.status).toBe(503);
  expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
  const html = await answer.text();
  expect(html).toContain('lang="es"');
  expect(html).toContain("Si has pagado, no vuelvas a pagar");
  // It checks again by itself, at the same link with its signature.
  expect(html).toMatch(/<meta http-equiv="refresh" content="\d+;url=[^"]*\/payments\/return\/[a-z0-9]+\/ok\?sig=/);
  const logged = lines.slice(before).filter((line) => line.includes("Page request failed")).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(logged).toEqual([expect.objectContaining({ level: "error", method: "GET", path: new URL(back).pathname })]);
  expect(printed).not.toHaveBeenCalled();
});

it("a page without an error page of its own that fails gets the app's error page, with nothing of why, and is logged once by the app's logger", async () => {
  const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
  // The login page (development login) looks the shop up: make that fail.
  vi.spyOn(stack().services.db.shop, "findUnique").mockRejectedValue(new Error("the database could not be read"));
  const before = lines.length;
  const answer = await fetch(`${stack().app.url}/auth/login?shop=${stack().shopDomain}`);
  expect(answer.status).toBe(500);
  const html = await answer.text();
  expect(html).toContain("<title>This page could not be shown</title>");
  expect(html).toContain("<h1>This page could not be shown</h1>");
  for (const developersWords of ["Application Error", "Hey developer"]) expect(html).not.toContain(developersWords);
  const logged = lines.slice(before).filter((line) => line.includes("Page request failed")).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(logged).toEqual([expect.objectContaining({ level: "error", method: "GET", path: "/auth/login" })]);
  expect(printed).not.toHaveBeenCalled();
});
