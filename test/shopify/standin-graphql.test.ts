// The stand-in's GraphQL endpoint by hand: it validates every operation against the real
// schema, answers invalid ones as Shopify does and records them; it also checks the token,
// answers exactly the selection set, and exposes faults and inspection over HTTP.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";

const TOKEN = "shpat_standin_test_token";
let standin: ShopifyStandin;

beforeAll(async () => {
  standin = await startShopifyStandin({ appUrl: "http://127.0.0.1:9", accessToken: TOKEN });
});

afterAll(async () => {
  await standin.close();
});

async function graphql(body: unknown, options: { token?: string | null; url?: string; contentType?: string } = {}) {
  const headers: Record<string, string> = { "Content-Type": options.contentType ?? "application/json" };
  if (options.token !== null) headers["X-Shopify-Access-Token"] = options.token ?? TOKEN;
  const response = await fetch(options.url ?? standin.graphqlEndpoint(), {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("schema validation", () => {
  it("answers an operation with an unknown field with Shopify-style errors and records it", async () => {
    const session = standin.state.createPaymentSession();
    const query = `mutation Broken($id: ID!) { paymentSessionResolve(id: $id) { paymentSession { id status } userErrors { message } } }`;
    const before = standin.state.invalidOperations().length;
    const answer = await graphql({ query, variables: { id: session.gid } });

    expect(answer.status).toBe(200);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining('Cannot query field "status" on type "PaymentSession"'),
        locations: [expect.objectContaining({ line: 1 })],
        extensions: expect.objectContaining({ code: "undefinedField" }),
      }),
    ]);
    // Nothing was executed: the session is untouched.
    expect(standin.state.session(session.id)?.state.code).toBe("OPEN");

    const invalid = standin.state.invalidOperations();
    expect(invalid).toHaveLength(before + 1);
    expect(invalid.at(-1)).toMatchObject({
      operationName: "Broken",
      variables: { id: session.gid },
      validation: { valid: false },
      sessionIds: [session.gid],
    });
  });

  it("rejects a missing required argument and a wrong enum value", async () => {
    const missing = await graphql({ query: `mutation { paymentSessionReject(id: "gid://shopify/PaymentSession/x") { userErrors { message } } }` });
    expect(missing.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "missingRequiredArguments" }) })]);

    const badEnum = await graphql({
      query: `mutation { paymentSessionReject(id: "gid://shopify/PaymentSession/x", reason: { code: NOT_A_REASON }) { userErrors { message } } }`,
    });
    expect(badEnum.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "argumentLiteralsIncompatible" }) })]);
  });

  it("rejects variables that do not coerce, such as a malformed DateTime", async () => {
    const session = standin.state.createPaymentSession();
    const answer = await graphql({
      query: `mutation P($id: ID!, $at: DateTime!) { paymentSessionPending(id: $id, pendingExpiresAt: $at, reason: BUYER_ACTION_REQUIRED) { userErrors { message } } }`,
      variables: { id: session.gid, at: "tomorrow" },
    });
    expect(answer.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "INVALID_VARIABLE" }) })]);
    expect(standin.state.invalidOperations().at(-1)?.operationName).toBe("P");
    expect(standin.state.session(session.id)?.state.code).toBe("OPEN");
  });

  it("answers a syntax error", async () => {
    const answer = await graphql({ query: "mutation { paymentSessionResolve(id: " });
    expect(answer.body.errors).toEqual([expect.objectContaining({ message: expect.stringContaining("Syntax Error") })]);
  });

  it("checks a document it has seen before as strictly: the same errors again, and its variables coerced on every call", async () => {
    const broken = `mutation Again($id: ID!) { paymentSessionResolve(id: $id) { paymentSession { id status } userErrors { message } } }`;
    const first = await graphql({ query: broken, variables: { id: "gid://shopify/PaymentSession/a" } });
    const second = await graphql({ query: broken, variables: { id: "gid://shopify/PaymentSession/b" } });
    expect(second.body).toEqual(first.body);
    expect(second.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "undefinedField" }) })]);

    const pending = `mutation Later($id: ID!, $at: DateTime!) { paymentSessionPending(id: $id, pendingExpiresAt: $at, reason: BUYER_ACTION_REQUIRED) { userErrors { message } } }`;
    const session = standin.state.createPaymentSession();
    const valid = await graphql({ query: pending, variables: { id: session.gid, at: new Date(Date.now() + 86_400_000).toISOString() } });
    expect(valid.body.errors).toBeUndefined();
    const badVariable = await graphql({ query: pending, variables: { id: session.gid, at: "tomorrow" } });
    expect(badVariable.body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: "INVALID_VARIABLE" }) })]);
  });
});

describe("execution", () => {
  it("answers exactly the selection set, with aliases", async () => {
    const session = standin.state.createPaymentSession();
    const answer = await graphql({
      query: `mutation { done: paymentSessionResolve(id: "${session.gid}") { paymentSession { state { ... on PaymentSessionState { code } } } } }`,
    });
    expect(answer.body.data).toEqual({ done: { paymentSession: { state: { code: "RESOLVED" } } } });
    expect(standin.state.operationsFor(session.id)).toHaveLength(1);
    expect(standin.state.operationsFor(session.id)[0]?.validation).toEqual({ valid: true, errors: [] });
  });

  it("accepts application/graphql bodies and queries", async () => {
    const answer = await graphql("{ publicApiVersions { handle supported } }", { contentType: "application/graphql" });
    expect(answer.body.data).toEqual({ publicApiVersions: [{ handle: "2026-04", supported: true }] });
  });

  it("resolves at most one payment session per checkout group", async () => {
    const resolve = async (gid: string) =>
      (await graphql({ query: `mutation { paymentSessionResolve(id: "${gid}") { paymentSession { state { __typename } } userErrors { message } } }` }))
        .body.data as { paymentSessionResolve: { paymentSession: { state: { __typename: string } }; userErrors: { message: string }[] } };
    const abandoned = standin.state.createPaymentSession();
    const retried = standin.state.createPaymentSession({}, { sameCheckoutAs: abandoned.id });
    expect(retried.group).toBe(abandoned.group);

    expect((await resolve(retried.gid)).paymentSessionResolve.userErrors).toEqual([]);
    const late = await resolve(abandoned.gid);
    expect(late.paymentSessionResolve.userErrors).toEqual([{ message: expect.stringContaining("already resolved") }]);
    expect(late.paymentSessionResolve.paymentSession.state.__typename).toBe("PaymentSessionStateRedirecting");

    const otherCheckout = standin.state.createPaymentSession();
    expect((await resolve(otherCheckout.gid)).paymentSessionResolve.userErrors).toEqual([]);
  });
});

describe("authentication and routing", () => {
  it("answers 401 without the right token, and records the attempt", async () => {
    const missing = await graphql({ query: "{ publicApiVersions { handle } }" }, { token: null });
    expect(missing.status).toBe(401);
    const wrong = await graphql({ query: "{ publicApiVersions { handle } }" }, { token: "shpat_nope" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.errors).toMatch(/Invalid API key or access token/);
    expect(standin.state.operations().filter((o) => o.status === 401).length).toBeGreaterThanOrEqual(2);
  });

  it("serves the endpoint with and without the shop in the path, and 404s another shop", async () => {
    const query = { query: "{ publicApiVersions { handle } }" };
    expect((await graphql(query, { url: `${standin.origin}/payments_apps/api/2026-04/graphql.json` })).status).toBe(200);
    expect((await graphql(query, { url: standin.graphqlEndpoint() })).status).toBe(200);
    expect((await graphql(query, { url: standin.graphqlEndpoint("other-shop.myshopify.com") })).status).toBe(404);
  });

  it("answers 400 to a body that is not a GraphQL request", async () => {
    const answer = await graphql("{not json");
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual({ query: "Required parameter missing or invalid" });
  });
});

describe("faults over HTTP", () => {
  it("arms, uses up and clears faults", async () => {
    const arm = await fetch(`${standin.origin}/_standin/faults`, { method: "POST", body: JSON.stringify({ mode: "http_500", count: 2 }) });
    expect(await arm.json()).toEqual({ fault: { mode: "http_500", remaining: 2, delayMs: 5000 } });
    const query = { query: "{ publicApiVersions { handle } }" };
    expect((await graphql(query)).status).toBe(500);
    expect((await graphql(query)).status).toBe(500);
    expect((await graphql(query)).status).toBe(200);

    await fetch(`${standin.origin}/_standin/faults`, { method: "POST", body: JSON.stringify({ mode: "throttled", count: 5 }) });
    const throttled = await graphql(query);
    expect(throttled.body.errors).toEqual([expect.objectContaining({ extensions: { code: "THROTTLED" } })]);
    await fetch(`${standin.origin}/_standin/faults`, { method: "DELETE" });
    expect((await graphql(query)).body.data).toBeDefined();
  });

  it("refuses an unknown fault with a reason", async () => {
    const response = await fetch(`${standin.origin}/_standin/faults`, { method: "POST", body: JSON.stringify({ mode: "explode" }) });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("mode");
  });
});

describe("inspection over HTTP", () => {
  it("lists sessions and operations, and shows one session with its operations", async () => {
    const session = standin.state.createPaymentSession({ amount: "12.50", currency: "USD" });
    await graphql({
      query: `mutation R($id: ID!) { paymentSessionReject(id: $id, reason: { code: CANCELLED_PAYMENT, merchantMessage: "gone" }) { userErrors { message } } }`,
      variables: { id: session.gid },
    });

    const all = (await (await fetch(`${standin.origin}/_standin/sessions`)).json()) as {
      paymentSessions: { id: string; state: { code: string } }[];
      operations: { operationName: string | null }[];
    };
    expect(all.paymentSessions.find((s) => s.id === session.id)?.state.code).toBe("REJECTED");
    expect(all.operations.some((o) => o.operationName === "R")).toBe(true);

    const one = await fetch(`${standin.origin}/_standin/sessions/${encodeURIComponent(session.gid)}`);
    const detail = (await one.json()) as { session: { request: { amount: string } }; operations: { variables: unknown; answer: unknown }[] };
    expect(detail.session.request.amount).toBe("12.50");
    expect(detail.operations).toEqual([
      expect.objectContaining({ variables: { id: session.gid }, answer: { data: { paymentSessionReject: { userErrors: [] } }, extensions: expect.anything() } }),
    ]);

    expect((await fetch(`${standin.origin}/_standin/sessions/nope`)).status).toBe(404);
  });
});
