// What an attacker probing the app's web surfaces meets: the shopper's pages are never cached,
// framed by another site or sent on in a Referer; the admin's pages are never cached; in
// production the shopper is only ever sent back to checkout over https, and only to a web
// address Shopify names; the mTLS proxy's header is compared in constant time.
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { API_ROUTES } from "../../app/api/api-routes.server";
import type { ApiRequest } from "../../app/api/http.server";
import type { AppServices } from "../../app/services.server";
import { parseMutationData } from "../../app/shopify/payments-apps/outcome";
import { SHOPPER_HEADERS } from "../support/page-headers";
import { stackForFile } from "../support/stack";

const compared = vi.hoisted(() => ({ count: 0 }));
vi.mock("node:crypto", async (original) => {
  const crypto = await original<typeof import("node:crypto")>();
  return { ...crypto, timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => (compared.count++, crypto.timingSafeEqual(a, b)) };
});
const { shopifyMtlsGuard } = await import("../../server/mtls");

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });

function headersOf(response: Response, names: readonly string[]): Record<string, string | null> {
  return Object.fromEntries(names.map((name) => [name, response.headers.get(name)]));
}

describe("page headers", () => {
  it("the shopper's payment page, its status and its return link are not cached, framed by other sites or sent on as a Referer", async () => {
    stack().logger.info("hardening: page headers");
    const { session, delivery } = await stack().standin.state.startPayment({ test: true });
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    const page = new URL(stack().services.links.paymentPageUrl(payment));
    const answers = {
      page: await fetch(page),
      status: await fetch(new URL(`${page.pathname}/status${page.search}`, page)),
      returnLink: await fetch(stack().services.links.returnUrl(payment, "ko"), { redirect: "manual" }),
      forgedLink: await fetch(new URL(`${page.pathname}?sig=forged`, page)),
    };
    expect(delivery.status).toBe(200);
    for (const [what, answer] of Object.entries(answers)) expect(headersOf(answer, Object.keys(SHOPPER_HEADERS)), what).toEqual(SHOPPER_HEADERS);
  });

  it("the admin's pages are kept by no cache", async () => {
    for (const path of ["/app", "/app/payments", "/app/settings"]) {
      const answer = await fetch(`${stack().app.url}${path}?shop=${stack().shopDomain}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("cache-control"), path).toBe("private, no-store");
    }
  });
});

describe("where the shopper is sent", () => {
  const sessionRoute = API_ROUTES.find((route) => route.path === "/payments/session")!;
  /** Shopify's request for a payment session of the stand-in's checkout, whose cancel URL is plain http. */
  const sessionRequest = (): ApiRequest => {
    const { request } = stack().standin.state.createPaymentSession({ test: true });
    expect(request.payment_method.data.cancel_url).toMatch(/^http:\/\//);
    const headers: Record<string, string> = { "content-type": "application/json", "shopify-shop-domain": stack().shopDomain, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" };
    const chunks = (async function* () {
      yield new TextEncoder().encode(JSON.stringify(request));
    })();
    return { header: (name) => headers[name.toLowerCase()] ?? null, params: {}, body: chunks };
  };

  it("in production, a payment session whose cancel URL is not https is refused with a 400 before anything is done", async () => {
    const production = { env: { NODE_ENV: "production" } } as unknown as AppServices;
    const answer = await sessionRoute.handle(production, sessionRequest());
    expect(answer).toMatchObject({ status: 400, body: { error: "invalid_payment_session", fields: { "payment_method.data.cancel_url": "must be https" } } });
  });

  it.each(["javascript:alert(document.domain)", "data:text/html,<script>alert(1)</script>"])("Shopify's next action %s is taken as no redirect, not as an answer to retry", (redirectUrl) => {
    const parsed = parseMutationData("PaymentSessionResolve", {
      paymentSessionResolve: {
        paymentSession: {
          id: "gid://shopify/PaymentSession/1",
          state: { __typename: "PaymentSessionStateResolved", code: "RESOLVED" },
          nextAction: { action: "REDIRECT", context: { __typename: "PaymentSessionActionsRedirect", redirectUrl } },
        },
        userErrors: [],
      },
    });
    expect(parsed).toMatchObject({ ok: true, outcome: { redirectUrl: null } });
  });
});

it("the mTLS proxy's header is compared with the configured value in constant time", async () => {
  const express = (await import("express")).default;
  const secret = "p7Q2xV9kL4mN8rT1wZ6yB3cF5hJ0sD2g";
  const app = express();
  app.use(shopifyMtlsGuard({ mode: "proxy", proxyHeader: "x-proxy-secret", proxyHeaderValue: secret, protectedPaths: ["/payments/session"] }));
  app.post("/payments/session", (_req, res) => void res.status(200).end());
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };
  try {
    const send = (value: string) => fetch(`http://127.0.0.1:${port}/payments/session`, { method: "POST", headers: { "x-proxy-secret": value } });
    compared.count = 0;
    expect((await send(`${secret.slice(0, -1)}X`)).status).toBe(403);
    expect((await send("short")).status).toBe(403);
    expect((await send(secret)).status).toBe(200);
    expect(compared.count).toBe(3);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
