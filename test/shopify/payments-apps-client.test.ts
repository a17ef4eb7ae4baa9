// The Payments Apps client against the Shopify stand-in over real HTTP: Shopify's state
// rules, user error classification, and every failure kind with its retry semantics.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  classifyUserErrors,
  createPaymentsAppsClient,
  type MutationOutcome,
  type PaymentsAppsClient,
  type PaymentsAppsError,
  type PaymentsAppsResult,
} from "~/shopify/payments-apps";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";

const TOKEN = "shpat_0123456789abcdef0123456789abcdef";
const HOUR = 60 * 60 * 1000;

let standin: ShopifyStandin;
let client: PaymentsAppsClient;
let clock = new Date("2026-05-04T10:00:00.000Z");
const logs: { level: string; message: string; fields?: Record<string, unknown> }[] = [];

beforeAll(async () => {
  // Nothing in this file sends sessions to an app, so the app URL is never dialled.
  standin = await startShopifyStandin({ appUrl: "http://127.0.0.1:9", accessToken: TOKEN, now: () => clock });
  client = createPaymentsAppsClient({
    shopDomain: standin.shopDomain,
    accessToken: TOKEN,
    endpoint: standin.graphqlEndpoint(),
    logger: {
      info: (message, fields) => logs.push({ level: "info", message, ...(fields ? { fields } : {}) }),
      warn: (message, fields) => logs.push({ level: "warn", message, ...(fields ? { fields } : {}) }),
      error: (message, fields) => logs.push({ level: "error", message, ...(fields ? { fields } : {}) }),
    },
  });
});

afterAll(async () => {
  await standin.close();
});

beforeEach(() => {
  clock = new Date("2026-05-04T10:00:00.000Z");
  standin.state.clearFaults();
});

function value(result: PaymentsAppsResult): MutationOutcome {
  if (result.isErr()) throw new Error(`expected an answer, got ${result.error.kind}: ${result.error.message}`);
  return result.value;
}

function failure(result: PaymentsAppsResult): PaymentsAppsError {
  if (result.isOk()) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
  return result.error;
}

function newPayment(kind: "sale" | "authorization" = "sale") {
  return standin.state.createPaymentSession({ kind });
}

describe("payment sessions", () => {
  it("resolves a session and returns Shopify's redirect", async () => {
    const session = newPayment();
    const outcome = value(await client.resolvePaymentSession(session.gid));
    expect(outcome).toMatchObject({
      operation: "PaymentSessionResolve",
      sessionId: session.gid,
      state: { code: "RESOLVED" },
      redirectUrl: `${standin.origin}/orders/${session.id}`,
      userErrors: [],
    });
    expect(classifyUserErrors(outcome)).toEqual({ ok: true, alreadyInState: false });
    expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
  });

  it("rejects a session with a reason and a merchant message", async () => {
    const session = newPayment();
    const outcome = value(
      await client.rejectPaymentSession(session.gid, { code: "CANCELLED_PAYMENT", merchantMessage: "The buyer cancelled on the gateway page." }),
    );
    expect(outcome.state).toEqual({ code: "REJECTED", reason: "CANCELLED_PAYMENT", merchantMessage: "The buyer cancelled on the gateway page." });
    expect(outcome.redirectUrl).toBe(`${standin.origin}/orders/${session.id}`);
    expect(standin.state.session(session.gid)?.state).toMatchObject({ code: "REJECTED", reason: "CANCELLED_PAYMENT" });
  });

  it("marks a session pending, then resolves it", async () => {
    const session = newPayment();
    const expires = new Date(clock.getTime() + 24 * HOUR);
    const pending = value(await client.pendPaymentSession(session.gid, { pendingExpiresAt: expires, reason: "NETWORK_ACTION_REQUIRED" }));
    expect(pending.state).toEqual({ code: "PENDING", reason: "NETWORK_ACTION_REQUIRED" });
    expect(pending.pendingExpiresAt).toBe(expires.toISOString());
    expect(pending.redirectUrl).toBe(`${standin.origin}/orders/${session.id}`);
    expect(classifyUserErrors(pending).ok).toBe(true);

    const resolved = value(await client.resolvePaymentSession(session.gid));
    expect(resolved.state).toEqual({ code: "RESOLVED" });
    expect(resolved.userErrors).toEqual([]);
  });

  it("marks a session pending, then rejects it", async () => {
    const session = newPayment();
    value(await client.pendPaymentSession(session.gid, { pendingExpiresAt: new Date(clock.getTime() + HOUR), reason: "BUYER_ACTION_REQUIRED" }));
    const rejected = value(await client.rejectPaymentSession(session.gid, { code: "PROCESSING_ERROR", merchantMessage: "The order expired." }));
    expect(rejected.state).toMatchObject({ code: "REJECTED", reason: "PROCESSING_ERROR" });
  });

  it("answers a repeated resolve, or a repeated reject, exactly as the first time", async () => {
    const resolvedSession = newPayment();
    const first = value(await client.resolvePaymentSession(resolvedSession.gid));
    const again = value(await client.resolvePaymentSession(resolvedSession.gid));
    expect(again).toEqual(first);
    expect(classifyUserErrors(again)).toEqual({ ok: true, alreadyInState: false });

    const rejectedSession = newPayment();
    const firstReject = value(await client.rejectPaymentSession(rejectedSession.gid, { code: "INSUFFICIENT_FUNDS", merchantMessage: "Underpaid." }));
    // The repeated call's reason is ignored: the first one stands.
    const againReject = value(await client.rejectPaymentSession(rejectedSession.gid, { code: "PROCESSING_ERROR", merchantMessage: "Other." }));
    expect(againReject).toEqual(firstReject);
  });

  it("refuses a conflicting second call with a user error, classified as a failure for the merchant", async () => {
    const session = newPayment();
    value(await client.resolvePaymentSession(session.gid));
    const conflicting = value(await client.rejectPaymentSession(session.gid, { code: "PROCESSING_ERROR" }));
    expect(conflicting.userErrors.length).toBeGreaterThan(0);
    expect(conflicting.state).toEqual({ code: "RESOLVED" });
    const verdict = classifyUserErrors(conflicting);
    expect(verdict).toMatchObject({ ok: false, kind: "conflicting_state", currentState: { code: "RESOLVED" } });
    if (!verdict.ok) expect(verdict.message).toMatch(/already resolved/);
    expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
  });

  it("refuses pending on a final session", async () => {
    const session = newPayment();
    value(await client.rejectPaymentSession(session.gid, { code: "PROCESSING_ERROR" }));
    const outcome = value(await client.pendPaymentSession(session.gid, { pendingExpiresAt: new Date(clock.getTime() + HOUR), reason: "BUYER_ACTION_REQUIRED" }));
    expect(outcome.userErrors[0]?.code).toBe("PENDING_INVALID_STATE");
    expect(classifyUserErrors(outcome)).toMatchObject({ ok: false, kind: "conflicting_state" });
  });

  it("requires pendingExpiresAt in the future and within 3 days", async () => {
    const session = newPayment();
    const tooFar = value(await client.pendPaymentSession(session.gid, { pendingExpiresAt: new Date(clock.getTime() + 73 * HOUR), reason: "BUYER_ACTION_REQUIRED" }));
    expect(tooFar.userErrors).toEqual([{ field: ["pendingExpiresAt"], message: expect.any(String), code: "OUT_OF_RANGE_PENDING_EXPIRES_AT" }]);
    expect(classifyUserErrors(tooFar)).toMatchObject({ ok: false, kind: "user_error" });

    const past = value(await client.pendPaymentSession(session.gid, { pendingExpiresAt: new Date(clock.getTime() - HOUR), reason: "BUYER_ACTION_REQUIRED" }));
    expect(past.userErrors[0]?.code).toBe("EXPIRED_PENDING_EXPIRES_AT");
    expect(standin.state.session(session.id)?.state.code).toBe("OPEN");
  });

  it("closes a pending session that nobody finalised in time, so a late resolve conflicts", async () => {
    const session = newPayment();
    value(await client.pendPaymentSession(session.gid, { pendingExpiresAt: new Date(clock.getTime() + HOUR), reason: "NETWORK_ACTION_REQUIRED" }));
    clock = new Date(clock.getTime() + 2 * HOUR);
    const late = value(await client.resolvePaymentSession(session.gid));
    expect(late.state).toMatchObject({ code: "REJECTED" });
    expect(classifyUserErrors(late)).toMatchObject({ ok: false, kind: "conflicting_state" });
  });

  it("reports an unknown session as not found", async () => {
    const outcome = value(await client.resolvePaymentSession("gid://shopify/PaymentSession/doesNotExist"));
    expect(outcome.sessionId).toBeNull();
    expect(outcome.state).toBeNull();
    expect(classifyUserErrors(outcome)).toMatchObject({ ok: false, kind: "not_found" });
  });
});

describe("classifyUserErrors", () => {
  const base: MutationOutcome = {
    operation: "PaymentSessionResolve",
    sessionId: "gid://shopify/PaymentSession/x",
    state: { code: "RESOLVED" },
    redirectUrl: null,
    pendingExpiresAt: null,
    configuration: null,
    userErrors: [{ field: null, message: "Payment session has already been resolved", code: null }],
  };

  it("counts a session already in the requested state as a success", () => {
    expect(classifyUserErrors(base)).toEqual({ ok: true, alreadyInState: true });
  });

  // Shopify answers a repeated call on a session already in that state with no user errors;
  // a refusal without the session may be about another one (a second payment of a checkout).
  it("counts any refusal without a session as a failure, whatever its words say", () => {
    const withoutSession = { ...base, sessionId: null, state: null };
    expect(classifyUserErrors(withoutSession)).toMatchObject({ ok: false, kind: "user_error" });
    expect(classifyUserErrors({ ...withoutSession, operation: "PaymentSessionReject" })).toMatchObject({ ok: false, kind: "user_error" });
    const sibling = { ...withoutSession, userErrors: [{ field: ["id"], message: "Another payment session of this checkout has already been resolved.", code: null }] };
    const verdict = classifyUserErrors(sibling);
    expect(verdict).toMatchObject({ ok: false, kind: "user_error" });
    if (!verdict.ok) expect(verdict.message).toContain("Another payment session of this checkout has already been resolved.");
  });

  it("counts a session in the other final state as a conflict", () => {
    const verdict = classifyUserErrors({ ...base, operation: "RefundSessionReject", state: { code: "RESOLVED" } });
    expect(verdict).toMatchObject({ ok: false, kind: "conflicting_state" });
    if (!verdict.ok) expect(verdict.message).toContain("refund session");
  });

  it("reports any other user error with Shopify's message", () => {
    const verdict = classifyUserErrors({
      ...base,
      operation: "PaymentsAppConfigure",
      state: null,
      userErrors: [{ field: ["externalHandle"], message: "External handle is too long", code: null }],
    });
    expect(verdict).toMatchObject({ ok: false, kind: "user_error" });
    if (!verdict.ok) expect(verdict.message).toContain("External handle is too long");
  });
});

describe("refund, capture and void sessions", () => {
  it("resolves and rejects refund sessions with Shopify's rules", async () => {
    const payment = newPayment();
    value(await client.resolvePaymentSession(payment.gid));
    const refund = standin.state.createFollowUpSession("refund", payment.id, { amount: "10.00" });
    const resolved = value(await client.resolveRefundSession(refund.gid));
    expect(resolved).toMatchObject({ operation: "RefundSessionResolve", sessionId: refund.gid, state: { code: "RESOLVED" }, userErrors: [] });
    expect(value(await client.resolveRefundSession(refund.gid))).toEqual(resolved);

    const conflicting = value(await client.rejectRefundSession(refund.gid, { code: "PROCESSING_ERROR", merchantMessage: "x" }));
    expect(conflicting.userErrors[0]?.code).toBe("REFUND_SESSION_INVALID_STATE");
    expect(classifyUserErrors(conflicting)).toMatchObject({ ok: false, kind: "conflicting_state" });

    const second = standin.state.createFollowUpSession("refund", payment.id, { amount: "5.00" });
    const rejected = value(
      await client.rejectRefundSession(second.gid, { code: "PROCESSING_ERROR", merchantMessage: "Refund from the gateway dashboard." }),
    );
    expect(rejected.state).toEqual({ code: "REJECTED", reason: "PROCESSING_ERROR", merchantMessage: "Refund from the gateway dashboard." });
    expect(standin.state.refundSessions().map((r) => r.state.code).sort()).toEqual(["REJECTED", "RESOLVED"]);
  });

  it("reports an unknown refund session with its code", async () => {
    const outcome = value(await client.resolveRefundSession("gid://shopify/RefundSession/nope"));
    expect(outcome.userErrors[0]?.code).toBe("REFUND_SESSION_NOT_FOUND");
    expect(classifyUserErrors(outcome)).toMatchObject({ ok: false, kind: "not_found" });
  });

  it("captures and voids authorizations", async () => {
    const captured = newPayment("authorization");
    value(await client.resolvePaymentSession(captured.gid));
    const capture = standin.state.createFollowUpSession("capture", captured.id);
    expect(value(await client.resolveCaptureSession(capture.gid)).state).toEqual({ code: "RESOLVED" });

    const failedCapture = newPayment("authorization");
    value(await client.resolvePaymentSession(failedCapture.gid));
    const capture2 = standin.state.createFollowUpSession("capture", failedCapture.id);
    expect(value(await client.rejectCaptureSession(capture2.gid, { code: "AUTHORIZATION_EXPIRED" })).state).toMatchObject({
      code: "REJECTED",
      reason: "AUTHORIZATION_EXPIRED",
    });

    const voided = newPayment("authorization");
    value(await client.resolvePaymentSession(voided.gid));
    const voidSession = standin.state.createFollowUpSession("void", voided.id);
    expect(value(await client.resolveVoidSession(voidSession.gid)).state).toEqual({ code: "RESOLVED" });
    const rejectedVoid = value(await client.rejectVoidSession(voidSession.gid, { code: "PROCESSING_ERROR" }));
    expect(rejectedVoid.userErrors[0]?.code).toBe("VOID_SESSION_INVALID_STATE");
  });
});

describe("paymentsAppConfigure", () => {
  it("tells Shopify the shop is ready, then not ready", async () => {
    const ready = value(await client.configurePaymentsApp({ externalHandle: "device-7f3a", ready: true }));
    expect(ready).toMatchObject({ operation: "PaymentsAppConfigure", configuration: { externalHandle: "device-7f3a", ready: true }, userErrors: [] });
    expect(standin.state.configuration()).toMatchObject({ externalHandle: "device-7f3a", ready: true });

    const notReady = value(await client.configurePaymentsApp({ ready: false }));
    expect(notReady.configuration).toEqual({ externalHandle: null, ready: false });
    expect(standin.state.configurationChanges().map((c) => c.ready)).toEqual([true, false]);
  });
});

describe("publicApiVersions", () => {
  it("answers the versions while Shopify takes the token, and 401 (unauthorized) once Shopify refuses it", async () => {
    const versions = await client.publicApiVersions();
    expect(versions.isOk() && versions.value.length).toBeGreaterThan(0);
    expect(versions._unsafeUnwrap()[0]).toEqual({ handle: expect.any(String), supported: expect.any(Boolean) });

    const stranger = createPaymentsAppsClient({ shopDomain: standin.shopDomain, accessToken: "shpat_not_a_token_the_shop_has_000", endpoint: standin.graphqlEndpoint() });
    const refused = await stranger.publicApiVersions();
    expect(refused.isErr() && refused.error).toMatchObject({ kind: "unauthorized", retryable: false, status: 401, operation: "PublicApiVersions" });
  });

  it.each([
    ["http_500", "server_error"],
    ["http_429", "throttled"],
    ["network", "network"],
  ] as const)("classifies the %s fault as %s, retryable", async (mode, kind) => {
    standin.state.setFault({ mode, count: 1 });
    const answer = await client.publicApiVersions();
    expect(answer.isErr() && answer.error).toMatchObject({ kind, retryable: true, operation: "PublicApiVersions" });
  });
});

describe("failures", () => {
  it("classifies a wrong token as unauthorized and never repeats the token", async () => {
    const wrongToken = "shpat_wrongwrongwrongwrongwrongwrong";
    const wrongLogs: string[] = [];
    const intruder = createPaymentsAppsClient({
      shopDomain: standin.shopDomain,
      accessToken: wrongToken,
      endpoint: standin.graphqlEndpoint(),
      logger: { info: (m, f) => wrongLogs.push(m + JSON.stringify(f)), warn: (m, f) => wrongLogs.push(m + JSON.stringify(f)), error: (m, f) => wrongLogs.push(m + JSON.stringify(f)) },
    });
    const error = failure(await intruder.resolvePaymentSession(newPayment().gid));
    expect(error).toMatchObject({ kind: "unauthorized", retryable: false, status: 401 });
    expect(JSON.stringify(error)).not.toContain(wrongToken);
    expect(wrongLogs.join("\n")).not.toContain(wrongToken);
    expect(wrongLogs.length).toBeGreaterThan(0);
  });

  it.each([
    ["throttled", "throttled", 200],
    ["http_429", "throttled", 429],
    ["http_500", "server_error", 500],
  ] as const)("classifies the %s fault as %s, retryable", async (mode, kind, status) => {
    const session = newPayment();
    standin.state.setFault({ mode, count: 1 });
    const error = failure(await client.resolvePaymentSession(session.gid));
    expect(error).toMatchObject({ kind, retryable: true, status });
    if (error.kind === "throttled") expect(error.retryAfterMs).toBeGreaterThan(0);
    // The fault was used up: retrying now succeeds, and the session was never changed by the failed call.
    expect(value(await client.resolvePaymentSession(session.gid)).state).toEqual({ code: "RESOLVED" });
  });

  it("classifies a dropped connection as a retryable network error", async () => {
    standin.state.setFault({ mode: "network", count: 2 });
    const session = newPayment();
    expect(failure(await client.resolvePaymentSession(session.gid))).toMatchObject({ kind: "network", retryable: true });
    expect(failure(await client.rejectPaymentSession(session.gid, { code: "PROCESSING_ERROR" }))).toMatchObject({ kind: "network" });
    expect(value(await client.resolvePaymentSession(session.gid)).state).toEqual({ code: "RESOLVED" });
  });

  it("classifies a slow answer as a retryable timeout", async () => {
    const impatient = createPaymentsAppsClient({
      shopDomain: standin.shopDomain,
      accessToken: TOKEN,
      endpoint: standin.graphqlEndpoint(),
      timeoutMs: 150,
    });
    standin.state.setFault({ mode: "slow", count: 1, delayMs: 5_000 });
    expect(failure(await impatient.resolvePaymentSession(newPayment().gid))).toMatchObject({ kind: "timeout", retryable: true, timeoutMs: 150 });
  });

  it("never puts the token in a log line", () => {
    expect(logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs)).not.toContain(TOKEN);
  });

  it("sent only schema-valid operations", () => {
    expect(standin.state.invalidOperations()).toEqual([]);
    expect(standin.state.operations().length).toBeGreaterThan(10);
  });
});

describe("answers that are not what the document asked for", () => {
  let junk: Server;
  let junkUrl: string;
  let nextAnswer: { status: number; body: string; headers?: Record<string, string> } = { status: 200, body: "{}" };

  beforeAll(async () => {
    junk = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(nextAnswer.status, { "Content-Type": "application/json", ...nextAnswer.headers });
        res.end(nextAnswer.body);
      });
    });
    await new Promise<void>((resolve) => junk.listen(0, "127.0.0.1", resolve));
    junkUrl = `http://127.0.0.1:${(junk.address() as AddressInfo).port}/graphql.json`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => junk.close(() => resolve()));
  });

  const call = async (answer: typeof nextAnswer) => {
    nextAnswer = answer;
    const junkClient = createPaymentsAppsClient({ shopDomain: "demo-shop.myshopify.com", accessToken: TOKEN, endpoint: junkUrl });
    return junkClient.resolvePaymentSession("gid://shopify/PaymentSession/abc");
  };

  it.each([
    ["not JSON", { status: 200, body: "<html>oops</html>" }],
    ["no data", { status: 200, body: "{}" }],
    ["a null payload", { status: 200, body: JSON.stringify({ data: { paymentSessionResolve: null } }) }],
    ["a wrongly typed field", { status: 200, body: JSON.stringify({ data: { paymentSessionResolve: { paymentSession: { id: 5 }, userErrors: [] } } }) }],
    ["an unknown state", { status: 200, body: JSON.stringify({ data: { paymentSessionResolve: { paymentSession: { id: "gid://shopify/PaymentSession/abc", state: { __typename: "X", code: "EXPLODED" } }, userErrors: [] } } }) }],
  ])("treats %s as an invalid response", async (_label, answer) => {
    expect(failure(await call(answer))).toMatchObject({ kind: "invalid_response", retryable: false });
  });

  it("reports top-level GraphQL errors as graphql_error, scrubbing the token", async () => {
    const error = failure(await call({ status: 200, body: JSON.stringify({ errors: [{ message: `Access denied for ${TOKEN}`, extensions: { code: "ACCESS_DENIED" } }] }) }));
    expect(error).toMatchObject({ kind: "graphql_error", retryable: false, errors: [{ code: "ACCESS_DENIED" }] });
    expect(JSON.stringify(error)).not.toContain(TOKEN);
  });

  it("treats 403 as unauthorized and other 4xx as non-retryable HTTP errors", async () => {
    expect(failure(await call({ status: 403, body: "{}" }))).toMatchObject({ kind: "unauthorized", status: 403 });
    expect(failure(await call({ status: 404, body: "{}" }))).toMatchObject({ kind: "http_error", status: 404, retryable: false });
    expect(failure(await call({ status: 503, body: "" }))).toMatchObject({ kind: "server_error", retryable: true });
  });

  it("follows no redirect: the access token and the mutation go to Shopify's endpoint only, and a 3xx is an HTTP error", async () => {
    const elsewhere: { token: string | undefined }[] = [];
    const other = createServer((req, res) => {
      elsewhere.push({ token: req.headers["x-shopify-access-token"] as string | undefined });
      req.resume();
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    try {
      const location = `http://127.0.0.1:${(other.address() as AddressInfo).port}/graphql.json`;
      for (const status of [301, 307, 308]) {
        expect(failure(await call({ status, body: "", headers: { Location: location } }))).toMatchObject({ kind: "http_error", status, retryable: false });
      }
      expect(elsewhere).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it("classifies a refused connection as a network error", async () => {
    // A port that was just free: nothing listens there any more.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const nowhere = createPaymentsAppsClient({ shopDomain: "demo-shop.myshopify.com", accessToken: TOKEN, endpoint: `http://127.0.0.1:${port}/graphql.json` });
    const error = failure(await nowhere.resolvePaymentSession("gid://shopify/PaymentSession/abc"));
    expect(error).toMatchObject({ kind: "network", retryable: true });
    expect(error.message).toContain("ECONNREFUSED");
  });
});

describe("the endpoint", () => {
  it("defaults to the shop's Payments Apps URL for the pinned version", () => {
    const real = createPaymentsAppsClient({ shopDomain: "demo-shop.myshopify.com", accessToken: TOKEN });
    expect(real.endpoint).toBe("https://demo-shop.myshopify.com/payments_apps/api/2026-04/graphql.json");
    expect(() => createPaymentsAppsClient({ shopDomain: "https://evil.example/x", accessToken: TOKEN })).toThrow(/shopDomain/);
  });
});
