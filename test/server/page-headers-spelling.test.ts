// The protective page headers (server/page-headers.ts) follow the page, not one spelling of its
// path: the router matches routes in any case, percent-decoded and with dot segments resolved,
// so /PAY/…, /%70ay/… and /x/../pay/… are the shopper's page, and /APP/… the admin's.
import http from "node:http";
import { describe, expect, it } from "vitest";
import { routedPath } from "../../app/lib/routed-path";
import { pageHeaders } from "../../server/page-headers";
import { SHOPPER_HEADERS } from "../support/page-headers";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });

const headersOf = (headers: Headers | http.IncomingHttpHeaders) =>
  Object.fromEntries(Object.keys(SHOPPER_HEADERS).map((name) => [name, headers instanceof Headers ? headers.get(name) : (headers[name] ?? null)]));

/** A GET of `path` exactly as written (fetch would resolve its dot segments first). */
function rawGet(base: string, path: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: hostname, port, path, method: "GET" }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

describe("the shopper's payment page under another spelling of its path", () => {
  it("is served with its no-store, same-origin referrer and anti-framing headers", async () => {
    const { session } = await stack().standin.state.startPayment({ test: true });
    const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
    const page = new URL(stack().services.links.paymentPageUrl(payment));
    const rest = page.pathname.replace(/^\/pay\//, "");
    expect(rest).not.toBe(page.pathname);
    for (const spelling of [`/PAY/${rest}`, `/Pay/${rest}`, `/%70ay/${rest}`, `/PAY/${rest}/STATUS`]) {
      const answer = await fetch(new URL(`${spelling}${page.search}`, page));
      expect(answer.status, spelling).toBe(200);
      // The router served the same page.
      if (!spelling.endsWith("/STATUS")) expect(await answer.text(), spelling).toContain(payment.id);
      expect(headersOf(answer.headers), spelling).toEqual(SHOPPER_HEADERS);
    }
    const dotted = await rawGet(stack().app.url, `/elsewhere/../PAY/${rest}${page.search}`);
    expect(dotted.status).toBe(200);
    expect(dotted.body).toContain(payment.id);
    expect(headersOf(dotted.headers)).toEqual(SHOPPER_HEADERS);
  });

  it("a path that cannot be percent-decoded gets the strictest headers", async () => {
    // The middleware on its own: the server refuses such a path before it (undecodable-address.test.ts).
    const written = await headersWritten("/PAY/%E0%A4%A?sig=x");
    expect(written).toMatchObject({ ...SHOPPER_HEADERS, "cache-control": "private, no-store" });
  });
});

describe("the admin's pages under another spelling of their path", () => {
  it("are kept by no cache and framed only by the shop's admin", async () => {
    for (const path of ["/APP/payments", "/App", "/%61pp/settings"]) {
      const answer = await fetch(`${stack().app.url}${path}?shop=${stack().shopDomain}`);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("cache-control"), path).toBe("private, no-store");
      // Shopify's App Bridge headers: the admin may frame the page, no other site may.
      expect(answer.headers.get("content-security-policy") ?? "(none)", path).toContain(`frame-ancestors https://${stack().shopDomain} https://admin.shopify.com`);
      // The development login's admin runs without App Bridge, offline: nothing is preloaded from Shopify's CDN.
      expect(answer.headers.get("link"), path).toBeNull();
    }
  });

  it("a page under /app that no route serves (a stale link's 404) is framed only by the shop's admin too", async () => {
    for (const path of ["/app/no-such-page", "/APP/no-such-page"]) {
      const answer = await fetch(`${stack().app.url}${path}?shop=${stack().shopDomain}`, { redirect: "manual" });
      expect(answer.status, path).toBe(404);
      expect(answer.headers.get("content-security-policy") ?? "(none)", path).toContain(`frame-ancestors https://${stack().shopDomain} https://admin.shopify.com`);
    }
  });
});

/** The headers pageHeaders() adds to a response to a GET of `url` whose route set none. */
async function headersWritten(url: string): Promise<Record<string, string>> {
  const set = new Map<string, string>();
  const res = {
    hasHeader: (name: string) => set.has(name.toLowerCase()),
    setHeader: (name: string, value: string) => set.set(name.toLowerCase(), value),
    writeHead: () => res,
  };
  await new Promise<void>((resolve) => pageHeaders()({ originalUrl: url, path: url.split("?")[0] } as never, res as never, () => resolve()));
  res.writeHead();
  return Object.fromEntries(set);
}

describe("routedPath", () => {
  it("reads a path as the router does", () => {
    expect(routedPath("/PAY/Abc?sig=1")).toBe("/pay/abc");
    expect(routedPath("/%70ay/x")).toBe("/pay/x");
    expect(routedPath("/x/../Pay/y")).toBe("/pay/y");
    expect(routedPath("/\\pay\\x")).toBe("/pay/x");
    expect(routedPath("//pay/x")).toBe("/pay/x");
    expect(routedPath("/APP.data")).toBe("/app.data");
    // An encoded slash stays inside its segment, as the router keeps it.
    expect(routedPath("/app%2Fx")).toBe("/app%2fx");
    expect(routedPath("/pay/%E0")).toBeNull();
  });

  it("gives the admin's data requests their headers too", async () => {
    expect(await headersWritten("/APP/payments.data?_routes=x")).toEqual({ "cache-control": "private, no-store", "x-content-type-options": "nosniff" });
    expect(await headersWritten("/healthz")).toEqual({});
  });
});
