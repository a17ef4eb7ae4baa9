// The local Shopify stand-in (development and tests only): the Payments Apps GraphQL
// endpoint validated against the real schema, the checkout simulator and order pages,
// fault injection, and an inspection API over everything it saw.
//
// Routes:
//   GET  /                                         home, links to the simulator
//   GET  /checkout, POST /checkout                 the checkout simulator
//   POST /checkout/sessions/:id/retry              send the same payment session again
//   GET  /checkout/cancelled/:id                   the payment session's cancel_url
//   GET  /orders/:id                               the order as Shopify shows it
//   POST /orders/:id/refunds|captures|voids        open a refund, capture or void session
//   POST [/:shop]/payments_apps/api/:version/graphql.json   the Payments Apps API
//   POST [/:shop]/admin/oauth/access_token         the token endpoint (refresh grant)
//   POST|DELETE|GET /_standin/faults               fault injection for the GraphQL endpoint
//   GET  /_standin/sessions[/:id], POST /_standin/sessions  inspection and scripted sessions
//   GET  /_standin/tokens, POST /_standin/tokens/expire     token grants seen; end the hour of the expiring tokens
//   POST /_standin/uninstall, POST /_standin/install         the merchant uninstalls the app (every token revoked) or installs it again

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { checkoutFormToInput, checkoutInputSchema, DEMO_CHECKOUT, type CheckoutInput } from "./checkout-input";
import { FaultQueue, faultRequestSchema, type ActiveFault, type FaultRequest } from "./faults";
import { CostBucket, REQUEST_COST, STANDARD_COST_LIMIT, throttledAnswer, type CostLimit } from "./cost-bucket";
import { answerGraphql } from "./graphql-endpoint";
import { BodyTooLargeError, isForm, readBody, redirect, sendHtml, sendJson } from "./http";
import { cancelledPage, checkoutPage, deliveryFailedPage, followUpFailedPage, homePage, messagePage, orderPage } from "./pages";
import { createRootValue } from "./resolvers";
import { paymentsAppsSchema, STANDIN_API_VERSION } from "./schema";
import { ShopifySimulator, type CheckoutOverrides } from "./simulator";
import {
  StandinStore,
  type AppDelivery,
  type FollowUpSessionRecord,
  type FollowUpType,
  type OperationRecord,
  type PaymentSessionRecord,
  type PaymentsAppConfiguration,
  type SessionRecord,
} from "./store";
import { OfflineTokens, type IssuedToken, type TokenGrantRecord, type TokenLifetimes } from "./tokens";

export interface ShopifyStandinOptions {
  port?: number;
  host?: string;
  /** The app's origin, e.g. http://127.0.0.1:3000. */
  appUrl: string;
  shopDomain?: string;
  /** The offline token the app must present; random when omitted. It does not expire (see `state.issueExpiringToken`). */
  accessToken?: string;
  /** The scopes the shop granted, as the token endpoint reports them. */
  scope?: string;
  /** How long expiring offline tokens and their refresh tokens last; Shopify's one hour and 90 days by default. */
  tokenLifetimes?: TokenLifetimes;
  paymentSessionPath?: string;
  refundSessionPath?: string | null;
  captureSessionPath?: string | null;
  voidSessionPath?: string | null;
  /** The stand-in's clock (pending expiry, timestamps). */
  now?: () => Date;
  /** Where shoppers reach the stand-in, for the links it hands out (order page, cancel URL); its listening address by default. */
  publicUrl?: string;
  /**
   * Shopify's cost-based rate limit on the GraphQL endpoint (cost-bucket.ts): a request the
   * bucket cannot pay for is answered THROTTLED. None by default: every request is paid for.
   */
  costLimit?: CostLimit;
}

/** What tests and the dev runner can read and drive in-process (the HTTP API mirrors it). */
export interface StandinInspection {
  paymentSessions(): PaymentSessionRecord[];
  refundSessions(): FollowUpSessionRecord[];
  captureSessions(): FollowUpSessionRecord[];
  voidSessions(): FollowUpSessionRecord[];
  /** Any session by id or gid. */
  session(idOrGid: string): SessionRecord | undefined;
  operations(): OperationRecord[];
  /** Operations that failed schema validation (or variable coercion): should stay empty. */
  invalidOperations(): OperationRecord[];
  operationsFor(idOrGid: string): OperationRecord[];
  configuration(): PaymentsAppConfiguration | null;
  configurationChanges(): PaymentsAppConfiguration[];
  /**
   * A payment session from the demo checkout with changes, not yet sent to the app.
   * `sameCheckoutAs` puts it in the group of an earlier session (the buyer's next attempt).
   */
  createPaymentSession(overrides?: CheckoutOverrides, options?: { sameCheckoutAs?: string }): PaymentSessionRecord;
  /**
   * Creates a payment session and POSTs it to the app, like a buyer choosing the app at checkout:
   * once (a test sees each answer), or with `retries`, again after a failed answer as Shopify does.
   */
  startPayment(overrides?: CheckoutOverrides, options?: { sameCheckoutAs?: string; retries?: boolean }): Promise<{ session: PaymentSessionRecord; delivery: AppDelivery }>;
  /** POSTs an existing payment session again (same id), as Shopify's retries do. */
  redeliverPayment(idOrGid: string): Promise<{ session: PaymentSessionRecord; delivery: AppDelivery }>;
  createFollowUpSession(type: FollowUpType, paymentIdOrGid: string, options?: { amount?: string }): FollowUpSessionRecord;
  startFollowUp(type: FollowUpType, paymentIdOrGid: string, options?: { amount?: string }): Promise<{ session: FollowUpSessionRecord; delivery: AppDelivery }>;
  /** POSTs an existing refund, capture or void session again (same id), as Shopify's retries do. */
  redeliverFollowUp(idOrGid: string): Promise<{ session: FollowUpSessionRecord; delivery: AppDelivery }>;
  setFault(request: FaultRequest): ActiveFault;
  clearFaults(): void;
  /**
   * An expiring offline token and its refresh token for the app with these credentials, as
   * token exchange with expiring=1 gives them; every earlier token (the fixed one too) stops working.
   */
  issueExpiringToken(client: { clientId: string; clientSecret: string }): IssuedToken;
  /** The hour is over: expiring access tokens issued so far are refused from now on (401). */
  expireAccessTokens(): void;
  /** Every request to the token endpoint, oldest first. */
  tokenGrants(): TokenGrantRecord[];
  /**
   * The merchant uninstalls the app, as Shopify does it: every token issued to the app is
   * revoked (the GraphQL endpoint answers them 401) and their refresh tokens are refused.
   */
  uninstallApp(): void;
  /** The merchant installs the app again: a new non-expiring offline token, which the app must store. */
  installApp(): string;
  reset(): void;
}

/** What Shopify answers in each HTTP fault mode: its status, `errors` and headers. */
const HTTP_FAULTS: Record<"http_500" | "http_403" | "http_402" | "http_423" | "http_429", { status: number; errors: string; headers?: Record<string, string> }> = {
  http_500: { status: 500, errors: "Internal Server Error" },
  // A token without the scope a mutation needs.
  http_403: { status: 403, errors: "[API] This action requires merchant approval for write_payment_sessions scope." },
  // A frozen shop (its plan unpaid): Shopify serves no call for it, whatever the token.
  http_402: { status: 402, errors: "Unavailable Shop" },
  // A locked shop (a suspected compromise or fraud): the same, with Locked.
  http_423: { status: 423, errors: "Locked" },
  http_429: { status: 429, errors: "Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service.", headers: { "Retry-After": "1" } },
};

export interface ShopifyStandin {
  origin: string;
  shopDomain: string;
  accessToken: string;
  /** The exact URL the app's Payments Apps client must use for this shop. */
  graphqlEndpoint(shopDomain?: string, apiVersion?: string): string;
  state: StandinInspection;
  close(): Promise<void>;
}

const GRAPHQL_PATH = /^\/(?:([a-z0-9][a-z0-9.-]*)\/)?payments_apps\/api\/([0-9]{4}-[0-9]{2}|unstable)\/graphql\.json$/i;
const TOKEN_PATH = /^\/(?:([a-z0-9][a-z0-9.-]*)\/)?admin\/oauth\/access_token$/i;

const scriptedSessionSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("payment"), checkout: z.record(z.unknown()).default({}), deliver: z.boolean().default(true) }),
  z.object({ type: z.literal("refund"), paymentId: z.string().min(1), amount: z.string().optional(), deliver: z.boolean().default(true) }),
  z.object({ type: z.literal("capture"), paymentId: z.string().min(1), deliver: z.boolean().default(true) }),
  z.object({ type: z.literal("void"), paymentId: z.string().min(1), deliver: z.boolean().default(true) }),
]);

export async function startShopifyStandin(options: ShopifyStandinOptions): Promise<ShopifyStandin> {
  const appUrl = z.string().url().parse(options.appUrl);
  const shopDomain = options.shopDomain ?? "demo-shop.myshopify.com";
  const accessToken = options.accessToken ?? `shpat_${randomBytes(16).toString("hex")}`;
  const now = options.now ?? (() => new Date());
  const schema = paymentsAppsSchema();
  const store = new StandinStore(now);
  const faults = new FaultQueue();
  const tokens = new OfflineTokens(shopDomain, accessToken, options.scope ?? "write_payment_gateways,write_payment_sessions", now, options.tokenLifetimes);
  let origin = "";
  const publicBase = () => options.publicUrl?.replace(/\/+$/, "") ?? origin;

  const simulator = new ShopifySimulator(store, {
    shopDomain,
    appUrl,
    paymentSessionPath: options.paymentSessionPath ?? "/payments/session",
    refundSessionPath: options.refundSessionPath === undefined ? "/payments/refund" : options.refundSessionPath,
    captureSessionPath: options.captureSessionPath === undefined ? "/payments/capture" : options.captureSessionPath,
    voidSessionPath: options.voidSessionPath === undefined ? "/payments/void" : options.voidSessionPath,
    now,
    origin: publicBase,
  });
  const rootValue = createRootValue(store, (paymentId) => `${publicBase()}/orders/${encodeURIComponent(paymentId)}`);
  // Held answers of the "slow" fault, released early when the stand-in closes.
  const heldAnswers = new Set<() => void>();
  const bucket = options.costLimit ? new CostBucket(options.costLimit, () => now().getTime()) : null;

  const requirePayment = (idOrGid: string): PaymentSessionRecord => {
    const payment = store.findPayment(idOrGid);
    if (!payment) throw new Error(`No payment session ${idOrGid}`);
    return payment;
  };
  const groupOf = (opts: { sameCheckoutAs?: string } | undefined): string | undefined =>
    opts?.sameCheckoutAs === undefined ? undefined : requirePayment(opts.sameCheckoutAs).group;
  const openFollowUp = (type: FollowUpType, paymentIdOrGid: string, amount?: string): FollowUpSessionRecord => {
    const result = simulator.createFollowUp(type, requirePayment(paymentIdOrGid), amount);
    if (typeof result === "string") throw new Error(result);
    return result;
  };

  const state: StandinInspection = {
    paymentSessions: () => clone(store.paymentSessions()),
    refundSessions: () => clone(store.followUpSessions("refund")),
    captureSessions: () => clone(store.followUpSessions("capture")),
    voidSessions: () => clone(store.followUpSessions("void")),
    session: (idOrGid) => {
      const found = store.find(idOrGid);
      return found ? clone(found) : undefined;
    },
    operations: () => clone(store.operations()),
    invalidOperations: () => clone(store.operations().filter((o) => o.validation?.valid === false)),
    operationsFor: (idOrGid) => clone(operationsFor(store, idOrGid)),
    configuration: () => clone(store.configuration()),
    configurationChanges: () => clone(store.configurationChanges()),
    createPaymentSession: (overrides, opts) => clone(simulator.createPaymentSession(simulator.checkoutInput(overrides), groupOf(opts))),
    startPayment: async (overrides, opts) => {
      const session = simulator.createPaymentSession(simulator.checkoutInput(overrides), groupOf(opts));
      const delivery = opts?.retries ? await simulator.deliverPaymentWithRetries(session) : await simulator.deliverPayment(session);
      return clone({ session, delivery });
    },
    redeliverPayment: async (idOrGid) => {
      const session = requirePayment(idOrGid);
      const delivery = await simulator.deliverPayment(session);
      return clone({ session, delivery });
    },
    createFollowUpSession: (type, paymentIdOrGid, opts) => clone(openFollowUp(type, paymentIdOrGid, opts?.amount)),
    startFollowUp: async (type, paymentIdOrGid, opts) => {
      const session = openFollowUp(type, paymentIdOrGid, opts?.amount);
      const delivery = await simulator.deliverFollowUp(session);
      return clone({ session, delivery });
    },
    redeliverFollowUp: async (idOrGid) => {
      const session = store.find(idOrGid);
      if (!session || session.type === "payment") throw new Error(`No refund, capture or void session ${idOrGid}`);
      const delivery = await simulator.deliverFollowUp(session);
      return clone({ session, delivery });
    },
    setFault: (request) => faults.set(faultRequestSchema.parse(request)),
    clearFaults: () => faults.clear(),
    issueExpiringToken: (client) => clone(tokens.issueExpiring(client)),
    expireAccessTokens: () => tokens.expireAccessTokens(),
    tokenGrants: () => clone(tokens.grantRecords()),
    uninstallApp: () => tokens.revokeAll(),
    installApp: () => tokens.issueFixed(),
    reset: () => {
      store.reset();
      faults.clear();
    },
  };

  async function handleGraphql(req: IncomingMessage, res: ServerResponse, shopInPath: string | undefined, apiVersion: string): Promise<void> {
    const rawBody = await readBody(req);
    /** Records a request answered with `mode` (an injected fault, or the cost limit) instead of being carried out. */
    const recordUnanswered = (mode: string, status: number, answer: unknown) =>
      store.record({
        at: now().toISOString(),
        shopDomain: shopInPath ?? shopDomain,
        apiVersion,
        operationName: null,
        query: null,
        variables: null,
        fault: mode,
        validation: null,
        status,
        answer,
        sessionIds: [],
      });
    const fault = faults.take();
    if (fault) {
      const recordFault = (status: number, answer: unknown) => recordUnanswered(fault.mode, status, answer);
      switch (fault.mode) {
        case "network":
          recordFault(0, null);
          req.socket.destroy();
          return;
        case "http_500":
        case "http_403":
        case "http_402":
        case "http_423":
        case "http_429": {
          const { status, errors, headers } = HTTP_FAULTS[fault.mode];
          recordFault(status, { errors });
          sendJson(res, status, { errors }, headers);
          return;
        }
        case "throttled": {
          const body = throttledAnswer({ ...STANDARD_COST_LIMIT, currentlyAvailable: 0 });
          recordFault(200, body);
          sendJson(res, 200, body);
          return;
        }
        case "slow":
          recordFault(200, "delayed");
          await new Promise<void>((resolve) => {
            const release = () => {
              clearTimeout(timer);
              heldAnswers.delete(release);
              resolve();
            };
            const timer = setTimeout(release, fault.delayMs);
            heldAnswers.add(release);
          });
          // The app may have stopped waiting meanwhile: Shopify still carries out the request it
          // received in full, and only the answer is lost.
          break;
      }
    }

    const answerable = () => !res.destroyed && !req.socket.destroyed;
    if (shopInPath !== undefined && shopInPath.toLowerCase() !== shopDomain) {
      if (answerable()) sendJson(res, 404, { errors: "Not Found" });
      return;
    }
    // Shopify's cost limit: a request the bucket cannot pay for is throttled, and costs nothing.
    const paid = bucket?.take(REQUEST_COST);
    if (paid && !paid.paid) {
      const body = throttledAnswer(paid.status);
      recordUnanswered("throttled", 200, body);
      if (answerable()) sendJson(res, 200, body, { "X-Shopify-API-Version": STANDIN_API_VERSION });
      return;
    }
    const answer = answerGraphql(
      {
        shopDomain,
        apiVersion,
        accessToken: headerValue(req, "x-shopify-access-token"),
        contentType: headerValue(req, "content-type"),
        rawBody,
      },
      { store, schema, rootValue, acceptsToken: (token) => tokens.accepts(token), tokenScopes: (token) => tokens.scopesOf(token), now, ...(paid ? { throttleStatus: paid.status } : {}) },
    );
    if (answerable()) sendJson(res, answer.status, answer.body, { "X-Shopify-API-Version": STANDIN_API_VERSION });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://standin.invalid");
    const path = url.pathname;
    const method = req.method ?? "GET";
    let match: RegExpExecArray | null;

    if ((match = GRAPHQL_PATH.exec(path))) {
      if (method !== "POST") return sendJson(res, 405, { errors: "Method Not Allowed" }, { Allow: "POST" });
      return handleGraphql(req, res, match[1], match[2] ?? STANDIN_API_VERSION);
    }
    if ((match = TOKEN_PATH.exec(path))) {
      if (method !== "POST") return sendJson(res, 405, { errors: "Method Not Allowed" }, { Allow: "POST" });
      if (match[1] !== undefined && match[1].toLowerCase() !== shopDomain) return sendJson(res, 404, { errors: "Not Found" });
      const answer = tokens.answerGrant(headerValue(req, "content-type"), await readBody(req));
      return sendJson(res, answer.status, answer.body);
    }

    if (path === "/" && method === "GET") return sendHtml(res, 200, homePage(store.paymentSessions()));

    if (path === "/checkout" && method === "GET") {
      const earlier = store.findPayment(url.searchParams.get("after") ?? "");
      return sendHtml(res, 200, earlier ? checkoutPage(inputOf(earlier), [], earlier.id, store.configuration()) : checkoutPage(DEMO_CHECKOUT, [], undefined, store.configuration()));
    }
    if (path === "/checkout" && method === "POST") {
      if (!isForm(req)) return sendHtml(res, 415, checkoutPage(DEMO_CHECKOUT, ["Send the checkout as a form."]));
      const form = new URLSearchParams(await readBody(req));
      const raw = checkoutFormToInput(form);
      const parsed = checkoutInputSchema.safeParse(raw);
      if (!parsed.success) {
        const shown = { ...DEMO_CHECKOUT, ...(raw as object) } as typeof DEMO_CHECKOUT;
        return sendHtml(res, 400, checkoutPage(shown, parsed.error.issues.map((i) => i.message)));
      }
      const earlier = store.findPayment(form.get("after") ?? "");
      const session = simulator.createPaymentSession(parsed.data, earlier?.group);
      return answerPaymentDelivery(res, session, await simulator.deliverPaymentWithRetries(session));
    }
    if ((match = /^\/checkout\/sessions\/([^/]+)\/retry$/.exec(path)) && method === "POST") {
      const session = store.findPayment(decodeURIComponent(match[1] ?? ""));
      if (!session) return sendPage(res, messagePage("Unknown payment session", "This shop has no such payment session.", 404));
      return answerPaymentDelivery(res, session, await simulator.deliverPaymentWithRetries(session));
    }
    if ((match = /^\/checkout\/cancelled\/([^/]+)$/.exec(path)) && method === "GET") {
      const id = decodeURIComponent(match[1] ?? "");
      return sendHtml(res, 200, cancelledPage(store.findPayment(id), id));
    }

    if ((match = /^\/orders\/([^/]+)$/.exec(path)) && method === "GET") {
      const session = store.findPayment(decodeURIComponent(match[1] ?? ""));
      if (!session) return sendPage(res, messagePage("Order not found", "This shop has no order for that payment session.", 404));
      return sendHtml(
        res,
        200,
        orderPage(session, store.followUpsOf(session.id), {
          canRefund: simulator.followUpPath("refund") !== null,
          canCaptureVoid: simulator.followUpPath("capture") !== null && simulator.followUpPath("void") !== null,
        }),
      );
    }
    if ((match = /^\/orders\/([^/]+)\/(refunds|captures|voids)$/.exec(path)) && method === "POST") {
      const session = store.findPayment(decodeURIComponent(match[1] ?? ""));
      if (!session) return sendPage(res, messagePage("Order not found", "This shop has no order for that payment session.", 404));
      const type = ({ refunds: "refund", captures: "capture", voids: "void" } as const)[match[2] as "refunds" | "captures" | "voids"];
      if (simulator.followUpPath(type) === null) return sendPage(res, messagePage("Not available", `The app has no ${type} session URL.`, 400));
      const form = isForm(req) ? new URLSearchParams(await readBody(req)) : new URLSearchParams();
      const amount = type === "refund" ? (form.get("amount")?.trim() || undefined) : undefined;
      const followUp = simulator.createFollowUp(type, session, amount);
      if (typeof followUp === "string") return sendPage(res, messagePage(`The ${type} cannot start`, followUp, 400));
      const delivery = await simulator.deliverFollowUp(followUp);
      if (delivery.outcome !== "accepted") return sendHtml(res, 502, followUpFailedPage(followUp, delivery));
      return redirect(res, `/orders/${encodeURIComponent(session.id)}`);
    }

    if (path === "/_standin/faults") {
      if (method === "GET") return sendJson(res, 200, { fault: faults.current() });
      if (method === "DELETE") {
        faults.clear();
        return sendJson(res, 200, { fault: null });
      }
      if (method === "POST") {
        const parsed = faultRequestSchema.safeParse(parseJson(await readBody(req)));
        if (!parsed.success) return sendJson(res, 400, { error: "invalid fault", issues: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`) });
        return sendJson(res, 200, { fault: faults.set(parsed.data) });
      }
      return sendJson(res, 405, { error: "method not allowed" });
    }

    if (path === "/_standin/tokens" && method === "GET") return sendJson(res, 200, { grants: tokens.grantRecords() });
    if (path === "/_standin/tokens/expire" && method === "POST") {
      tokens.expireAccessTokens();
      return sendJson(res, 200, { expired: true });
    }
    if (path === "/_standin/uninstall" && method === "POST") {
      tokens.revokeAll();
      return sendJson(res, 200, { uninstalled: true });
    }
    if (path === "/_standin/install" && method === "POST") return sendJson(res, 200, { accessToken: tokens.issueFixed() });

    if (path === "/_standin/sessions" && method === "GET") {
      return sendJson(res, 200, {
        shopDomain,
        paymentSessions: store.paymentSessions(),
        refundSessions: store.followUpSessions("refund"),
        captureSessions: store.followUpSessions("capture"),
        voidSessions: store.followUpSessions("void"),
        configuration: store.configuration(),
        configurationChanges: store.configurationChanges(),
        operations: store.operations(),
      });
    }
    if (path === "/_standin/sessions" && method === "POST") return handleScriptedSession(req, res);
    if ((match = /^\/_standin\/sessions\/(.+)$/.exec(path)) && method === "GET") {
      const id = decodeURIComponent(match[1] ?? "");
      const session = store.find(id);
      if (!session) return sendJson(res, 404, { error: `no session ${id}` });
      return sendJson(res, 200, {
        session,
        followUps: session.type === "payment" ? store.followUpsOf(session.id) : [],
        operations: operationsFor(store, session.gid),
      });
    }

    return sendPage(res, messagePage("Not found", `Nothing here: ${method} ${path}`, 404));
  }

  async function handleScriptedSession(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = scriptedSessionSchema.safeParse(parseJson(await readBody(req)));
    if (!parsed.success) return sendJson(res, 400, { error: "invalid session request", issues: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`) });
    const request = parsed.data;
    if (request.type === "payment") {
      const input = checkoutInputSchema.safeParse({ ...DEMO_CHECKOUT, ...request.checkout });
      if (!input.success) return sendJson(res, 400, { error: "invalid checkout", issues: input.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`) });
      const session = simulator.createPaymentSession(input.data);
      const delivery = request.deliver ? await simulator.deliverPayment(session) : null;
      return sendJson(res, 201, { session, delivery });
    }
    const payment = store.findPayment(request.paymentId);
    if (!payment) return sendJson(res, 404, { error: `no payment session ${request.paymentId}` });
    if (simulator.followUpPath(request.type) === null && request.deliver) return sendJson(res, 400, { error: `no ${request.type} session path is configured` });
    const followUp = simulator.createFollowUp(request.type, payment, request.type === "refund" ? request.amount : undefined);
    if (typeof followUp === "string") return sendJson(res, 409, { error: followUp });
    const delivery = request.deliver ? await simulator.deliverFollowUp(followUp) : null;
    return sendJson(res, 201, { session: followUp, delivery });
  }

  function answerPaymentDelivery(res: ServerResponse, session: PaymentSessionRecord, delivery: AppDelivery): void {
    if (delivery.outcome === "accepted" && delivery.redirectUrl) return redirect(res, delivery.redirectUrl);
    sendHtml(res, 502, deliveryFailedPage(session, delivery));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof BodyTooLargeError) return sendJson(res, 413, { error: error.message });
      console.error("shopify stand-in: request failed", error);
      sendJson(res, 500, { error: "the stand-in failed; see its log" });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  origin = `http://${host}:${address.port}`;

  return {
    origin,
    shopDomain,
    accessToken,
    graphqlEndpoint: (shop = shopDomain, apiVersion = STANDIN_API_VERSION) => `${origin}/${shop}/payments_apps/api/${apiVersion}/graphql.json`,
    state,
    close: async () => {
      for (const release of [...heldAnswers]) release();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** The checkout an earlier session came from, to prefill the buyer's next attempt. */
function inputOf(session: PaymentSessionRecord): CheckoutInput {
  const { request } = session;
  return {
    amount: request.amount,
    currency: request.currency,
    test: request.test,
    locale: request.merchant_locale,
    kind: request.kind,
    customer: {
      ...(request.customer.email ? { email: request.customer.email } : {}),
      ...(request.customer.phone_number ? { phone_number: request.customer.phone_number } : {}),
      billing_address: request.customer.billing_address ?? {},
      ...(request.customer.shipping_address ? { shipping_address: request.customer.shipping_address } : {}),
    },
  };
}

function operationsFor(store: StandinStore, idOrGid: string): OperationRecord[] {
  const gid = store.find(idOrGid)?.gid ?? idOrGid;
  return store.operations().filter((o) => o.sessionIds.includes(gid));
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function sendPage(res: ServerResponse, page: { status: number; body: string }): void {
  sendHtml(res, page.status, page.body);
}

function clone<T>(value: T): T {
  return structuredClone(value);
}
