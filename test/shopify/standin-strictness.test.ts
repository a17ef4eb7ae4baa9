// The Shopify stand-in is no laxer than Shopify where the app could lean on it: a GraphQL body
// is executed only when sent as JSON (or application/graphql), and a refund, capture or void
// counts as accepted only when the app answers as PAYMENTS_APPS.md says, 201 with an empty body,
// so an app that regressed to 200 with a body fails its tests.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";

const TOKEN = "shpat_standin_strictness_token";
let standin: ShopifyStandin;

beforeAll(async () => {
  standin = await startShopifyStandin({ appUrl: "http://127.0.0.1:9", accessToken: TOKEN });
});

afterAll(async () => {
  await standin.close();
});

const RESOLVE = `mutation PaymentSessionResolve($id: ID!) {
  paymentSessionResolve(id: $id) { paymentSession { id state { ... on PaymentSessionState { code } } } userErrors { field message } }
}`;

function resolve(target: ShopifyStandin, gid: string, contentType: string | null = "application/json") {
  const headers: Record<string, string> = { "X-Shopify-Access-Token": TOKEN };
  if (contentType !== null) headers["Content-Type"] = contentType;
  return fetch(target.graphqlEndpoint(), { method: "POST", headers, body: JSON.stringify({ query: RESOLVE, variables: { id: gid }, operationName: "PaymentSessionResolve" }) });
}

it.each([["text/plain"], [null]])("does not execute a JSON body sent as %s, and answers 400", async (contentType) => {
  const session = standin.state.createPaymentSession();
  const answer = await resolve(standin, session.gid, contentType);
  expect(answer.status).toBe(400);
  expect(standin.state.session(session.id)?.state.code).toBe("OPEN");
  // Sent as JSON, the same body is executed.
  expect((await resolve(standin, session.gid)).status).toBe(200);
  expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
});

/** A stand-in whose app answers every request with `status` and `body`. */
async function standinForApp(status: number, body: string, work: (local: ShopifyStandin) => Promise<void>) {
  const app: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(status, body ? { "Content-Type": "application/json" } : {});
      res.end(body);
    });
  });
  await new Promise<void>((ready) => app.listen(0, "127.0.0.1", ready));
  const local = await startShopifyStandin({ appUrl: `http://127.0.0.1:${(app.address() as AddressInfo).port}`, accessToken: TOKEN });
  try {
    await work(local);
  } finally {
    await local.close();
    await new Promise<void>((closed) => app.close(() => closed()));
  }
}

it.each([
  [200, "", "refused"],
  [200, '{"ok":true}', "refused"],
  [201, '{"ok":true}', "refused"],
  [201, "", "accepted"],
])("counts a refund answered %i with the body %j as %s", async (status, body, outcome) => {
  await standinForApp(status, body, async (local) => {
    const payment = local.state.createPaymentSession();
    await resolve(local, payment.gid);
    const { delivery } = await local.state.startFollowUp("refund", payment.id);
    expect(delivery.status).toBe(status);
    expect(delivery.outcome, delivery.detail).toBe(outcome);
  });
});
