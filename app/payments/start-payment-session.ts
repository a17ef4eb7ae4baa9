// Flow 2: Shopify asks for a payment. The session is recorded before the gateway is
// called, the gateway order is created once, and the answer is stored so that a repeated
// `id` (even concurrently) gets exactly the first answer.
import { Prisma, type Payment, type Shop } from "../../generated/prisma/sqlite/client";
import { readSessionShop, shopRowUnchanged, type SessionShop } from "~/shops/shop-rows.server";
import { customerEmailKey, customerPhoneKey } from "~/shops/customer-identity";
import { shopGateway } from "~/shops/gateway-directory.server";
import Decimal from "decimal.js";
import { compareDecimal, formatFiatAmount, parseDecimal } from "~/gateway/money";
import { isFiatCode } from "~/gateway/fiat-codes";
import { isFinalGatewayStatus } from "~/gateway/statuses";
import { statusShowsFundsReceived } from "./status-mapping";
import { listedOrderByReference, type CreateOrderRequest, type CreateOrderResponse, type GatewayOrder } from "~/gateway/schemas";
import { err, type Result } from "neverthrow";
import type { PreparedOrder } from "~/gateway/client";
import type { GatewayError } from "~/gateway/errors";
import { INSTANCE_CLOCK_ALLOWANCE_MS, type GatewayEnv, type PaymentsDeps, type ShopGatewayAccess } from "./deps";
import { customerAddress, cutText, gatewayCustomerFields, gatewayLanguage } from "./customer-fields";
import { amountLimitIn, COIN_REFUSED_EVENT } from "~/payment-page/coins";
import { pageLanguage, primaryLanguage, type PageLanguage } from "~/payment-page/language";
import { fill, pageTexts } from "~/payment-page/texts";
import { orderTermsMismatch } from "./order-terms";
import { flagColumns, flagEvent, type AttentionFlag } from "./attention-flags";
import type { PaymentSessionRequest } from "./shopify-requests";
import { valueWithin } from "~/lib/deadline";
import { whileRenewing } from "~/lib/renewal";
import { backoffMs, type BackoffPolicy } from "~/lib/backoff";
import { isOpenPaymentState } from "./payment-state";
import { insertSessionPayment, newRowId, storeSessionAnswer, type AnswerColumns } from "./session-rows.server";

export interface SessionAnswer {
  status: number;
  body: Record<string, unknown>;
  headers?: Record<string, string>;
}

const answer = (status: number, error: string, message: string, headers?: Record<string, string>): SessionAnswer => ({
  status,
  body: { error, message },
  ...(headers ? { headers } : {}),
});

const inProgress = () => answer(503, "in_progress", "This payment session is still being created; retry shortly.", { "Retry-After": "2" });

/** How long a duplicate waits for the first request's answer before asking Shopify to retry. */
const DUPLICATE_WAIT_MS = 8_000;
/** How often a duplicate looks for that answer: after 50 ms, doubling up to 250 ms. */
const DUPLICATE_POLL: BackoffPolicy = { baseMs: 50, capMs: 250 };
/**
 * How long a request's claim on a payment holds once written. The request renews it every
 * CLAIM_RENEW_MS while it works (a gateway call can take a minute: quota waits, 429s retried,
 * a timeout), so a live request never loses it to a repeat; one that stops renewing (a crash)
 * frees the payment for Shopify's retry within this long.
 */
const CLAIM_MS = 30_000;
const CLAIM_RENEW_MS = CLAIM_MS / 3;

/**
 * How long after an order was requested it is looked up at all. The gateway may still be at
 * work on a request whose answer was lost (the client gave up at its timeout, the process
 * died): the order appears in the listing only once the gateway is done, so an empty listing
 * proves nothing before then, and creating another order could make a second one. A repeat
 * within this time is asked to come back, without spending a listing of the device's quota.
 * A repeat after a crash comes no sooner anyway: the dead attempt's claim lapses after 30 s.
 * The request's time may come from another instance's clock: the difference they may have is
 * waited for too.
 */
export const ORDER_MAY_STILL_APPEAR_MS = 30_000 + INSTANCE_CLOCK_ALLOWANCE_MS;

/** The gateway order this payment may have requested: found, proven absent (null), or not known yet. */
async function lookUpRequestedOrder(
  deps: PaymentsDeps,
  access: ShopGatewayAccess,
  payment: Pick<Payment, "id" | "createdAt" | "shopifyPaymentId" | "orderRequestedAt">,
  options: { withCoin?: boolean } = {},
): Promise<FoundOrder | null | "unknown"> {
  const requestedAt = payment.orderRequestedAt?.getTime() ?? 0;
  if (deps.clock.now().getTime() - requestedAt < ORDER_MAY_STILL_APPEAR_MS) return "unknown";
  return findOrderByReference(access, payment, deps.clock.now(), options);
}

/**
 * A request's hold on a payment: a token of its own, written with the claim, and when the
 * claim lapses as this request last wrote it. Only the holder of the token sends the order
 * or stores the answer; a request that takes the payment over writes a token of its own.
 */
interface Claim {
  token: string;
  until: Date;
  /** When this request last wrote orderRequestedAt with its claim; null when it has not. */
  requestedAt: Date | null;
}

function newClaim(now: Date, requestedAt: Date | null = null): Claim {
  return { token: newRowId(), until: new Date(now.getTime() + CLAIM_MS), requestedAt };
}

/**
 * orderRequestedAt is written again before a POST unless this request wrote it this recently:
 * the time an order may still appear counts from the last POST that may have reached the
 * gateway, not from an earlier one (a quota wait, a 429, a resend come between).
 */
const REQUESTED_AT_FRESH_MS = 1_000;

/**
 * Shopify's test sessions always go to the gateway sandbox, and a real one to the live
 * gateway: a real checkout is never served by the sandbox, whose payment page lets anyone
 * mark an order paid. While the shop's own test mode is on, real checkouts are refused
 * (checkSession) instead.
 */
export function gatewayEnvFor(test: boolean): GatewayEnv {
  return test ? "sandbox" : "live";
}

/** What the session flow uses of a payment: a new one is not read back after it is created. */
type SessionPayment = Pick<Payment, "id" | "shopId" | "shopifyPaymentId" | "gid" | "amount" | "currency" | "createdAt" | "orderRequestedAt" | "gatewayOrderId">;

function storedAnswer(payment: Pick<Payment, "responseStatus" | "responseBody">): SessionAnswer | null {
  if (payment.responseStatus === null || payment.responseBody === null) return null;
  return { status: payment.responseStatus, body: JSON.parse(payment.responseBody) as Record<string, unknown> };
}

/**
 * How long Shopify is kept waiting for a session's answer. Past it (the device's minute of
 * order creations full, the gateway answering 429s or slowly), Shopify is asked to retry while
 * the order is still being made; its retry gets the answer once it is stored (a repeat waits
 * for it, or is asked to retry again), rather than Shopify giving up on a request whose order
 * the gateway then makes for nobody.
 */
export const SESSION_ANSWER_WITHIN_MS = 10_000;

const STILL_WORKING = Symbol("still working");

export async function startPaymentSession(
  deps: PaymentsDeps,
  input: { shopDomain: string; request: PaymentSessionRequest },
  options: { answerWithinMs?: number } = {},
): Promise<SessionAnswer> {
  const work = answerPaymentSession(deps, input);
  const answered = await valueWithin(work, options.answerWithinMs ?? SESSION_ANSWER_WITHIN_MS, STILL_WORKING);
  if (answered !== STILL_WORKING) return answered;
  deps.logger.warn("Payment session still being made: Shopify is asked to retry", { shop: input.shopDomain, paymentId: input.request.id });
  work.catch((error: unknown) => deps.logger.error("Payment session failed after Shopify was asked to retry", { shop: input.shopDomain, paymentId: input.request.id, error }));
  // Stopping the instance waits for it (its order may be on its way to the gateway).
  deps.lateWork?.track(work);
  return inProgress();
}

async function answerPaymentSession(deps: PaymentsDeps, input: { shopDomain: string; request: PaymentSessionRequest }): Promise<SessionAnswer> {
  const { request } = input;
  // A shop an earlier session read: the session is recorded only if the shop's row is still
  // the same (in the same statement), so the shop is not read first. Anything else (a refusal,
  // a repeated id, a shop that changed) goes the long way, from a fresh read.
  const remembered = deps.shops.byDomain.recall(input.shopDomain);
  if (remembered) {
    const checked = checkSession(deps, remembered, gatewayEnvFor(request.test), request);
    if (checked.ok) {
      const started = await recordAndStart(deps, remembered, checked, request, shopRowUnchanged(remembered));
      if (started) return started;
    }
  }

  // The record is written only while the shop's row is as read, here too: a device removed or
  // replaced meanwhile (by the merchant, in the milliseconds between) must not have a payment
  // started on credentials the shop no longer has. The shop is then read again.
  for (let read = 1; ; read++) {
    const shop = await readSessionShop(deps.sql, input.shopDomain);
    deps.shops.byDomain.remember(input.shopDomain, shop);
    if (!shop || shop.uninstalledAt) {
      return answer(422, "shop_not_configured", "This shop has not set up crypto payments.");
    }
    const findExisting = () => deps.db.payment.findUnique({ where: { shopId_shopifyPaymentId: { shopId: shop.id, shopifyPaymentId: request.id } } });

    // Checks that need no record: a refusal here stores nothing, but a repeat of a session
    // recorded earlier (before the shop's settings changed) still gets the first answer.
    const checked = checkSession(deps, shop, gatewayEnvFor(request.test), request);
    if (!checked.ok) {
      if (checked.refusal.body.error === UNREADABLE_CREDENTIALS) {
        deps.logger.error("Payment session refused: the shop's stored gateway credentials cannot be decrypted with the configured keys", { shop: shop.shopDomain, test: request.test });
        // Shopify is told the method is not ready, so checkout stops offering it meanwhile.
        deps.notify?.readiness();
      }
      const existing = await findExisting();
      return existing ? replayOrResume(deps, shop, existing, request) : checked.refusal;
    }
    // After a record not written, the likeliest reason is a repeated id.
    const existing = remembered || read > 1 ? await findExisting() : null;
    if (existing) return replayOrResume(deps, shop, existing, request);
    const started = await recordAndStart(deps, shop, checked, request, shopRowUnchanged(shop));
    if (started) return started;
    const winner = await findExisting();
    if (winner) return replayOrResume(deps, shop, winner, request);
    // Neither recorded nor there: the shop's row changed since it was read.
    if (read === SESSION_SHOP_READS) {
      deps.logger.warn("Payment session not recorded: the shop's settings kept changing while it was; Shopify is asked to retry", { shop: shop.shopDomain, paymentId: request.id });
      return answer(503, "shop_changing", "The shop's payment settings changed while this session was being recorded; retry shortly.", { "Retry-After": "2" });
    }
  }
}

/** How often a session reads its shop again when the shop's row changed before the session could be recorded. */
const SESSION_SHOP_READS = 3;

/**
 * Records the session (only while `onlyIf` holds) and goes on to its answer; null when nothing
 * was recorded: the shop already has a payment with this id, or `onlyIf` did not hold.
 */
async function recordAndStart(
  deps: PaymentsDeps,
  shop: SessionShop,
  checked: Extract<SessionCheck, { ok: true }>,
  request: PaymentSessionRequest,
  onlyIf?: Prisma.Sql,
): Promise<SessionAnswer | null> {
  const { access, amount } = checked;
  const env = access.env;
  const now = deps.clock.now();
  const customer = request.customer;
  const address = customer?.billing_address ?? customer?.shipping_address;
  // Unless the shopper picks the coin on the app's page, the gateway order is requested right
  // after this: the record says so from the start, durably before the request is sent.
  const requestsOrder = shop.checkoutMode !== "app_page";
  const orderRequestedAt = requestsOrder ? now : null;
  const claim = newClaim(now, orderRequestedAt);
  const payment: SessionPayment = {
    id: newRowId(),
    shopId: shop.id,
    shopifyPaymentId: request.id,
    gid: request.gid,
    amount,
    currency: request.currency,
    createdAt: now,
    orderRequestedAt,
    gatewayOrderId: null,
  };
  // Inserted first (the unique shop + Shopify id decides between concurrent duplicates), not
  // looked up first. The gateway order's quota slot is taken meanwhile, on another connection:
  // the order is only sent once the record is committed, and a session not recorded (a repeat
  // of one already recorded, above all: Shopify's retries) gives its slot back, as it sends
  // nothing: repeats must not use up the device's order creations (15 a minute, 200 a day).
  // Nor does it wait for the slot: a repeat is answered at once, even while the device's
  // minute is full, and the slot goes back whenever it comes.
  const preparing = requestsOrder ? access.client.prepareOrder(orderRequest(deps, shop, access.env, payment, request)) : Promise.resolve(null);
  const giveBackWhenTaken = () => void preparing.then((taken) => giveBack(deps, taken), () => undefined);
  let created: Awaited<ReturnType<typeof insertSessionPayment>>;
  try {
    created = await insertSessionPayment(
      deps.sql,
      {
        shopId: shop.id,
        shopifyPaymentId: request.id,
        gid: request.gid,
        groupId: request.group,
        amount,
        currency: request.currency,
        test: request.test,
        kind: request.kind,
        cancelUrl: request.cancelUrl,
        // The shopper's language (the gateway's page is given the same).
        merchantLocale: shopperLocale(request),
        gatewayEnv: env,
        state: "started",
        // The injected clock, like every other time the reconciler compares against.
        createdAt: now,
        sessionClaimUntil: claim.until,
        sessionClaimToken: claim.token,
        orderRequestedAt,
        customerEmail: customerEmailKey(customer?.email),
        customerName: [address?.given_name, address?.family_name].filter(Boolean).join(" ") || null,
        customerPhone: customerPhoneKey(customer?.phone_number ?? address?.phone_number),
        billingAddress: address ? JSON.stringify(address) : null,
        lastCheckedAt: now,
      },
      { type: "session_received", detail: JSON.stringify({ amount, currency: request.currency, test: request.test, env }), at: now },
      { id: payment.id, ...(onlyIf ? { onlyIf } : {}) },
    );
  } catch (error) {
    giveBackWhenTaken();
    throw error;
  }
  if (!created) {
    // Nothing recorded (a repeat), so nothing is sent: the slot goes back.
    giveBackWhenTaken();
    return null;
  }
  const [prepared] = await Promise.allSettled([preparing]);
  if (prepared.status === "rejected") {
    // The slot could not be taken (the quota's statement failed), so nothing was sent: the
    // record says so and is left unclaimed, and Shopify's retry starts the order at once
    // instead of waiting out this attempt's claim and then looking the order up.
    await releaseClaim(deps, payment, claim, { orderRequestedAt: null }).catch((error: unknown) =>
      deps.logger.warn("Could not release a payment session whose order was never sent", { paymentId: payment.id, error }),
    );
    throw prepared.reason;
  }
  const order = prepared.value;
  return whileHolding(deps, payment, claim, () =>
    order ? createGatewayOrder(deps, shop, access, payment, request, claim, { prepared: order }) : answerSession(deps, shop, access, payment, request, claim),
  );
}

/**
 * Gives back the quota slot of an order prepared but never sent, so that it does not count
 * against the device's order creations (15 a minute, 200 a day). A failure to is logged: the
 * slot then counts until its minute and day are over, as if the order had been sent.
 */
async function giveBack(deps: PaymentsDeps, prepared: Result<PreparedOrder, GatewayError> | null): Promise<void> {
  if (!prepared?.isOk()) return;
  try {
    await prepared.value.release();
  } catch (error) {
    deps.logger.warn("Could not give back the quota slot of a gateway order that was not sent", { error });
  }
}

/** Runs `work` while renewing the request's claim on the payment, so that it lapses only if this process stops. */
function whileHolding<T>(deps: PaymentsDeps, payment: Pick<Payment, "id">, claim: Claim, work: () => Promise<T>): Promise<T> {
  return whileRenewing(
    () => renewClaim(deps, payment, claim),
    CLAIM_RENEW_MS,
    (error) => deps.logger.warn("Could not renew a payment session's claim", { paymentId: payment.id, error }),
    work,
  );
}

/** While the shop's own test mode is on, only Shopify's test sessions are taken: a real checkout is declined. */
function declinedInTestMode(shop: Pick<Shop, "testMode">, env: GatewayEnv): boolean {
  return shop.testMode && env === "live";
}

const testModeRefusal = () => answer(422, "test_mode", "The shop's crypto payments are in test mode: only Shopify test orders are accepted.");

/**
 * What differs between a repeated session id's request and the session recorded under it, or
 * null when it is the same session. Shopify retries with the same body, so one that differs is
 * not a retry and must not get the first answer (an order for another amount, the sandbox's
 * page for a real checkout). The amount is compared as the fiat's decimal: "49.9" is "49.90".
 */
function sessionMismatch(payment: Pick<Payment, "gid" | "amount" | "currency" | "test" | "gatewayEnv" | "kind">, request: PaymentSessionRequest): string | null {
  if (request.gid !== payment.gid) return "gid";
  if (request.currency !== payment.currency) return "currency";
  if (request.test !== payment.test || gatewayEnvFor(request.test) !== payment.gatewayEnv) return "test flag";
  if (request.kind !== payment.kind) return "kind";
  const amount = isFiatCode(request.currency) ? formatFiatAmount(request.amount, request.currency).andThen(parseDecimal) : null;
  const stored = parseDecimal(payment.amount);
  if (!amount || amount.isErr() || stored.isErr() || compareDecimal(amount.value, stored.value) !== 0) return "amount";
  return null;
}

/** Credentials sealed under a key this instance does not hold: the operator's to fix, so a 503 (Shopify retries it) and an error in the log. */
const UNREADABLE_CREDENTIALS = "gateway_credentials_unreadable";

type SessionCheck = { ok: true; access: ShopGatewayAccess; amount: string } | { ok: false; refusal: SessionAnswer };

function checkSession(deps: PaymentsDeps, shop: SessionShop, env: GatewayEnv, request: PaymentSessionRequest): SessionCheck {
  const refuse = (error: string, message: string, status = 422): SessionCheck => ({ ok: false, refusal: answer(status, error, message) });
  if (declinedInTestMode(shop, env)) return { ok: false, refusal: testModeRefusal() };
  const gateway = shopGateway(deps.gateways, shop, env);
  if (gateway.state === "not_connected") {
    return refuse("shop_not_configured", env === "sandbox" ? "Test payments are not set up: connect the gateway sandbox in the app." : "The shop has not connected its gateway device yet.");
  }
  if (gateway.state === "unreadable") {
    return refuse(UNREADABLE_CREDENTIALS, "The shop's gateway credentials cannot be read; the merchant must connect the gateway again in the app.", 503);
  }
  const access = gateway.access;
  if (!isFiatCode(request.currency)) return refuse("unsupported_currency", `The gateway does not take payments in ${request.currency}.`);
  const amount = formatFiatAmount(request.amount, request.currency);
  if (amount.isErr()) return refuse("invalid_amount", `The amount ${request.amount} is not valid in ${request.currency}.`);
  if (!new Decimal(amount.value).gt(0)) return refuse("invalid_amount", "The amount must be greater than zero.");
  return { ok: true, access, amount: amount.value };
}

/** The answer for a recorded session, new or resumed after a failed or dead attempt. */
function answerSession(
  deps: PaymentsDeps,
  shop: SessionShop,
  access: ShopGatewayAccess,
  payment: SessionPayment,
  request: PaymentSessionRequest,
  claim: Claim,
): Promise<SessionAnswer> {
  if (shop.checkoutMode === "app_page" && payment.orderRequestedAt === null) {
    // The shopper picks the coin on the app's own page; the gateway order is created then.
    return finish(deps, payment, claim, { status: 200, body: { redirect_url: deps.links.paymentPageUrl(payment) } }, "started", {}, { page: "app" });
  }
  return createGatewayOrder(deps, shop, access, payment, request, claim);
}

async function replayOrResume(deps: PaymentsDeps, shop: SessionShop, payment: Payment, request: PaymentSessionRequest): Promise<SessionAnswer> {
  // Compared before anything is replayed or resumed, and refused with nothing stored: the
  // session recorded under this id keeps its own answer for its own retries.
  const differs = sessionMismatch(payment, request);
  if (differs) {
    deps.logger.warn("A repeated payment session id came with another session's details: refused", { shop: shop.shopDomain, paymentId: payment.id, differs });
    return answer(409, "session_mismatch", `This payment session id was already used with a different ${differs}; it is not started again.`);
  }
  const waitUntil = Date.now() + DUPLICATE_WAIT_MS;
  let waits = 0;
  let current = payment;
  let claim: Claim;
  for (;;) {
    const stored = storedAnswer(current);
    if (stored) return stored;
    const now = deps.clock.now();
    if (!current.sessionClaimUntil || current.sessionClaimUntil < now) {
      // Nobody holds it (an earlier attempt failed transiently or died): take it over, with a
      // token of this request's own, so that an earlier attempt still at work can neither
      // send the order nor store its answer any more.
      const taken = newClaim(now);
      const claimed = await deps.db.payment.updateMany({
        where: { id: current.id, responseStatus: null, OR: [{ sessionClaimUntil: null }, { sessionClaimUntil: { lt: now } }] },
        data: { sessionClaimUntil: taken.until, sessionClaimToken: taken.token },
      });
      if (claimed.count === 1) {
        claim = taken;
        break;
      }
    } else if (Date.now() > waitUntil) {
      return inProgress();
    } else {
      // Soon at first (the answer is most often a gateway call away), then every quarter second:
      // repeats that pile up behind a slow gateway read the row a few times a second each.
      await new Promise((resolve) => setTimeout(resolve, backoffMs(++waits, DUPLICATE_POLL)));
    }
    current = await deps.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  }
  const held = claim;
  return whileHolding(deps, current, held, async () => {
    const fresh = await deps.db.payment.findUniqueOrThrow({ where: { id: current.id } });
    // No answer was stored, so none was given: the session is answered as a new one would be
    // now, and a real checkout is declined while the shop's test mode is on.
    if (declinedInTestMode(shop, fresh.gatewayEnv as GatewayEnv)) return finish(deps, fresh, held, testModeRefusal(), "not_started");
    const gateway = shopGateway(deps.gateways, shop, current.gatewayEnv as GatewayEnv);
    if (gateway.state === "unreadable") {
      // The operator's to fix, as for a new session: refused for now (503), nothing stored, the
      // payment left to Shopify's retry.
      await releaseClaim(deps, fresh, held);
      return answer(503, UNREADABLE_CREDENTIALS, "The shop's gateway credentials cannot be read; the merchant must connect the gateway again in the app.");
    }
    if (gateway.state === "not_connected") return finish(deps, fresh, held, answer(422, "shop_not_configured", "The shop's gateway credentials were removed."), "not_started");
    return answerSession(deps, shop, gateway.access, fresh, request, held);
  });
}

type OrderShop = Pick<Shop, "shopDomain" | "gatewayLanguage" | "checkoutMode" | "liveFixedCurrency" | "sandboxFixedCurrency">;

/**
 * The coin an order of this environment is created with, in that environment's own symbols
 * (the live gateway and the sandbox name their coins differently); null when the shopper
 * picks it on the gateway's page.
 */
function fixedCoin(shop: OrderShop, env: GatewayEnv): string | null {
  if (shop.checkoutMode !== "fixed_coin") return null;
  return (env === "live" ? shop.liveFixedCurrency : shop.sandboxFixedCurrency) || null;
}

/** The shopper's locale: the shop's when Shopify sends none. */
function shopperLocale(request: PaymentSessionRequest): string | null {
  return request.customer?.locale ?? request.merchant_locale ?? null;
}

/**
 * The language of the order's note, which the gateway's page shows: the page's own language
 * (`language`, the gateway's code), in the shopper's variant of it (Brazil's Portuguese).
 */
function noteLanguage(language: string, locale: string | null | undefined): PageLanguage {
  const shoppers = pageLanguage(locale);
  return primaryLanguage(shoppers) === language.toLowerCase() ? shoppers : pageLanguage(language);
}

function orderRequest(deps: PaymentsDeps, shop: OrderShop, env: GatewayEnv, payment: SessionPayment, request: PaymentSessionRequest): CreateOrderRequest {
  const links = deps.links;
  const coin = fixedCoin(shop, env);
  const locale = shopperLocale(request);
  const language = gatewayLanguage(shop.gatewayLanguage, locale);
  return {
    expected_output_amount: payment.amount,
    fiat: payment.currency as CreateOrderRequest["fiat"],
    reference: payment.shopifyPaymentId.slice(0, 256),
    internal_data: JSON.stringify({ shop: shop.shopDomain, gid: payment.gid, payment: payment.id }).slice(0, 1024),
    notes: cutText(fill(pageTexts(noteLanguage(language, locale)).orderNote, { shop: shop.shopDomain }), 512),
    language,
    merchant_urlok: links.returnUrl(payment, "ok"),
    merchant_urlko: links.returnUrl(payment, "ko"),
    merchant_url_standby: links.returnUrl(payment, "standby"),
    ...(coin ? { input_currency: coin } : {}),
    ...gatewayCustomerFields(request.customer),
  };
}

/**
 * Stores the session's answer and gives it, while this request still holds the payment; when
 * another request took it over meanwhile, that one's answer is given instead and nothing of
 * this one is stored (an order this request made then stays unused and expires at no cost).
 */
async function finish(
  deps: PaymentsDeps,
  payment: Pick<Payment, "id">,
  claim: Claim,
  result: SessionAnswer,
  state: "started" | "awaiting_payment" | "not_started",
  columns: AnswerColumns = {},
  eventDetail: Record<string, unknown> = {},
): Promise<SessionAnswer> {
  const type = state === "not_started" ? "session_refused" : state === "started" ? "sent_to_payment_page" : "order_created";
  const stored = await storeSessionAnswer(
    deps.sql,
    { id: payment.id, claimToken: claim.token },
    { state, responseStatus: result.status, responseBody: JSON.stringify(result.body), columns },
    { type, detail: JSON.stringify({ status: result.status, ...eventDetail }), at: deps.clock.now() },
  );
  if (stored) return result;
  deps.logger.warn("Another request took the payment session over: its answer stands", { paymentId: payment.id, gatewayOrderId: columns.gatewayOrderId ?? null });
  return answerOfClaimHolder(deps, payment);
}

/** The answer for a payment another request took over: the one it stored, or a request to retry while it works. */
async function answerOfClaimHolder(deps: PaymentsDeps, payment: Pick<Payment, "id">): Promise<SessionAnswer> {
  const current = await deps.db.payment.findUniqueOrThrow({ where: { id: payment.id }, select: { responseStatus: true, responseBody: true } });
  return storedAnswer(current) ?? inProgress();
}

/** The longest cause of a refusal kept in a payment's timeline and shown. */
const CAUSE_MAX = 300;

/**
 * The shopper's details an order request carries that a gateway's message must not bring back
 * into the app's records: the whole name and each part of it, the e-mail, the phone and the
 * address, city and postcode included. Shorter than 4 characters, a value is left (it would
 * take out common words with it).
 */
export function personalDetails(customer: PaymentSessionRequest["customer"]): string[] {
  const { full_name, email_client, phone_number, home_address, address_additional, city, province, zip_code } = gatewayCustomerFields(customer);
  const address = customerAddress(customer);
  return [full_name, address?.given_name, address?.family_name, email_client, phone_number, home_address, address_additional, city, province, zip_code].filter(
    (value): value is string => typeof value === "string" && value.length >= 4,
  );
}

/**
 * The gateway's own words for refusing an order (its `detail`), fit to keep in the payment's
 * timeline and to show: one line of plain text of at most CAUSE_MAX characters, with any of
 * the shopper's details the order carried, and anything shaped like an e-mail address, taken
 * out. Null when the gateway gave none. Shown as text, never as markup.
 */
export function gatewayCause(detail: string | null | undefined, personal: readonly string[] = []): string | null {
  if (!detail) return null;
  let text = detail.replace(/[\p{Cc}\p{Cf}]/gu, " ");
  // As a whole word: a name inside a longer word ("Maxim" in "maximum") is not the name.
  for (const value of personal) text = text.replace(new RegExp(`(?<![\\p{L}\\p{N}])${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\p{L}\\p{N}])`, "giu"), "[removed]");
  text = text.replace(/[^\s@]+@[^\s@]+/g, "[removed]");
  return cutText(text, CAUSE_MAX) ?? null;
}

/** What the timeline keeps of why the gateway refused an order: its own words, or the app's check the request broke. */
function refusalCause(error: GatewayError, customer: PaymentSessionRequest["customer"]): string | null {
  switch (error.kind) {
    case "rejected":
      return gatewayCause(error.detail, personalDetails(customer));
    case "invalid_request":
      return gatewayCause(error.message);
    default:
      return null;
  }
}

function refusal(error: GatewayError, cause: string | null): { result: SessionAnswer; final: boolean } {
  switch (error.kind) {
    case "rejected":
      return { result: answer(422, "gateway_rejected", cause ?? "The gateway refused this payment."), final: true };
    case "invalid_request":
      return { result: answer(422, "invalid_order", error.message), final: true };
    case "unauthorized":
      return { result: answer(422, "gateway_unauthorized", "The gateway refused the shop's device key: the merchant must check it in the app."), final: true };
    case "throttled":
    case "quota_exhausted":
      return { result: answer(503, "gateway_busy", "The gateway's request quota is used up for now; retry later.", { "Retry-After": "30" }), final: false };
    default:
      return { result: answer(503, "gateway_unavailable", "The gateway could not be reached; retry shortly.", { "Retry-After": "5" }), final: false };
  }
}

/**
 * Creates the gateway order of a claimed payment. `prepared`: this attempt created the record
 * with orderRequestedAt already set, so no earlier attempt can have sent it, and prepared the
 * order (its quota slot taken) while doing so.
 */
async function createGatewayOrder(
  deps: PaymentsDeps,
  shop: SessionShop,
  access: ShopGatewayAccess,
  payment: SessionPayment,
  request: PaymentSessionRequest,
  claim: Claim,
  options: { prepared?: Result<PreparedOrder, GatewayError> } = {},
): Promise<SessionAnswer> {
  const log = deps.logger.child({ shop: shop.shopDomain, paymentId: payment.id });

  if (!options.prepared) {
    // An earlier attempt may have created the order without learning its answer: look it up first.
    if (payment.gatewayOrderId === null && payment.orderRequestedAt !== null) {
      const found = await lookUpRequestedOrder(deps, access, payment);
      if (found === "unknown") {
        await releaseClaim(deps, payment, claim);
        return answer(503, "gateway_unavailable", "The gateway could not be reached; retry shortly.", { "Retry-After": "5" });
      }
      if (found) return adoptFoundOrder(deps, payment, claim, found);
    }
    // In the same statement as the record that the order is about to be sent: the claim is
    // renewed, while it is still this request's (the lookup may have outlasted it).
    if (!(await renewClaim(deps, payment, claim, { orderRequestedAt: deps.clock.now() }))) return answerOfClaimHolder(deps, payment);
  }
  const accept = (order: CreateOrderResponse) => {
    const mismatch = orderTermsMismatch(order, payment);
    if (mismatch) return refuseOrderOfOtherTerms(deps, payment, claim, order.identifier, mismatch);
    log.info("Gateway order created", { gatewayOrderId: order.identifier, env: access.env });
    return finish(deps, payment, claim, { status: 200, body: { redirect_url: order.web_url } }, "awaiting_payment", orderData(order), { gatewayOrderId: order.identifier });
  };
  const prepared = options.prepared ?? (await access.client.prepareOrder(orderRequest(deps, shop, access.env, payment, request)));
  const created = await sendWhileClaimed(deps, payment, claim, prepared);
  if (created === null) return answerOfClaimHolder(deps, payment);
  if (created.isOk()) return accept(created.value);

  const error = created.error;
  if (error.kind === "outcome_unknown") {
    const cause = error.cause as GatewayError;
    if (mayStillBeInProgress(cause)) {
      // A listing now cannot prove that no order exists, and creating another could make a
      // second one. orderRequestedAt stays: Shopify's retry looks the order up first, once
      // the gateway has had time to finish the request.
      log.warn("Gateway order outcome unknown; left for Shopify's retry to look up", { reason: error.message });
      await releaseClaim(deps, payment, claim);
      return answer(503, "gateway_unavailable", "The gateway did not confirm the order; retry shortly.", { "Retry-After": "10" });
    }
    log.warn("Gateway order outcome unknown; looking it up by reference", { reason: error.message });
    const found = await findOrderByReference(access, payment, deps.clock.now());
    if (found && found !== "unknown") return adoptFoundOrder(deps, payment, claim, found);
    if (listingProvesNoOrder(cause, found)) {
      // The gateway answered that it failed, so it was done with the request, and the lookup
      // proves no order exists: creating once more cannot duplicate it.
      const retry = await sendWhileClaimed(deps, payment, claim, await access.client.prepareOrder(orderRequest(deps, shop, access.env, payment, request)));
      if (retry === null) return answerOfClaimHolder(deps, payment);
      if (retry.isOk()) return accept(retry.value);
    }
    // Keep orderRequestedAt: the next attempt looks the order up before creating one.
    await releaseClaim(deps, payment, claim);
    return answer(503, "gateway_unavailable", "The gateway did not confirm the order; retry shortly.", { "Retry-After": "5" });
  }
  const cause = refusalCause(error, request.customer);
  const { result, final } = refusal(error, cause);
  log.warn("Gateway refused the order", { kind: error.kind, final });
  if (final) return finish(deps, payment, claim, result, "not_started", {}, { reason: error.kind, ...(cause ? { cause } : {}) });
  // Nothing was created: release the record for Shopify's retry to resume.
  await releaseClaim(deps, payment, claim, { orderRequestedAt: null });
  return result;
}

/**
 * Ends a session whose gateway order was made for other terms than the payment's (another
 * fiat: the gateway used the device's default, say): the shopper is never sent to pay it, and
 * Shopify hears a final refusal, as for an order the gateway refused. The order stays unused
 * and expires at no cost; the payment's timeline names it, for the merchant to find it in the
 * gateway dashboard.
 */
function refuseOrderOfOtherTerms(deps: PaymentsDeps, payment: SessionPayment, claim: Claim, gatewayOrderId: string, mismatch: string): Promise<SessionAnswer> {
  deps.logger.error("Gateway order made for other terms than the payment's: not offered to the shopper", { paymentId: payment.id, gatewayOrderId, mismatch });
  const result = answer(422, "gateway_order_mismatch", "The gateway made the order for another amount or currency than the payment's; the payment cannot be taken.");
  return finish(deps, payment, claim, result, "not_started", {}, { reason: "order_terms_mismatch", cause: mismatch, gatewayOrderId });
}

/**
 * Whether the gateway may still be at work on a POST /orders/ whose outcome is unknown: it
 * timed out, the connection broke after the request left, or something in front of the
 * gateway answered for it. Only an answer of the gateway's own says it is done with the
 * request: a 2xx that could not be read, or the 500 of its application failing. Any other 5xx
 * may be a proxy's, CDN's or load balancer's giving up on a request the gateway still works on
 * (502 and 504; 503 from an upstream reset or a router's timeout; Cloudflare's 520 and 524).
 */
function mayStillBeInProgress(cause: GatewayError): boolean {
  return cause.kind === "timeout" || cause.kind === "network" || (cause.kind === "server_error" && cause.status !== 500);
}

/**
 * Whether a creation whose outcome is unknown surely made no order: the gateway answered that
 * it failed (a 5xx of its own, so it was done with the request) and the lookup by reference,
 * made after, found none (null; "unknown" when it could not tell).
 */
function listingProvesNoOrder(cause: GatewayError, found: unknown): boolean {
  return found === null && cause.kind === "server_error" && !mayStillBeInProgress(cause);
}

/**
 * Sends a prepared order if this request still holds the payment; null, with nothing (more)
 * sent, when another request has taken the payment over. The claim is renewed while the request
 * works (whileHolding), so one with more than a renewal period left needs no round trip (the
 * session's usual case: its claim was written moments ago, beside the quota slot); otherwise
 * it is renewed first.
 */
async function sendWhileClaimed(
  deps: PaymentsDeps,
  payment: Pick<Payment, "id">,
  claim: Claim,
  prepared: Result<PreparedOrder, GatewayError>,
): Promise<Result<CreateOrderResponse, GatewayError> | null> {
  if (prepared.isErr()) return err(prepared.error);
  const now = deps.clock.now();
  const left = claim.until.getTime() - now.getTime();
  const requestedLately = claim.requestedAt !== null && now.getTime() - claim.requestedAt.getTime() < REQUESTED_AT_FRESH_MS;
  if (left < CLAIM_RENEW_MS || !requestedLately) {
    // Until it is sent, the order's quota slot goes back whenever it will not be.
    const renewed = await renewClaim(deps, payment, claim, { orderRequestedAt: now }).catch(async (error: unknown) => {
      await giveBack(deps, prepared);
      throw error;
    });
    if (!renewed) {
      await giveBack(deps, prepared);
      return null;
    }
  }
  // A 429 or a connection that failed before sending is sent again after a wait, and only
  // while the claim is still this request's: another that took over may have made the order.
  let lost = false;
  const sent = await prepared.value.send({
    mayResend: async () => {
      lost = !(await renewClaim(deps, payment, claim, { orderRequestedAt: deps.clock.now() }));
      return !lost;
    },
  });
  return lost ? null : sent;
}

/** Renews this request's claim (writing `data` with it) while it is still its own; false, with nothing written, when it is not. */
async function renewClaim(deps: PaymentsDeps, payment: Pick<Payment, "id">, claim: Claim, data: Prisma.PaymentUpdateManyMutationInput = {}): Promise<boolean> {
  const until = new Date(deps.clock.now().getTime() + CLAIM_MS);
  const renewed = await deps.db.payment.updateMany({ where: { id: payment.id, sessionClaimToken: claim.token }, data: { ...data, sessionClaimUntil: until } });
  if (renewed.count !== 1) return false;
  claim.until = until;
  if (data.orderRequestedAt instanceof Date) claim.requestedAt = data.orderRequestedAt;
  return true;
}

type FoundOrder = Pick<GatewayOrder, "identifier" | "currency_id" | "crypto_amount" | "address" | "tag_memo" | "expired_time" | "status" | "fiat" | "fiat_amount" | "transactions">;

/**
 * Whether a found order ended (expired, cancelled, failed, deleted) with nothing received: it
 * takes no more money, and a shopper shown it could only be told the time ran out.
 */
function endedEmpty(order: FoundOrder): boolean {
  const { status } = order;
  return status.known && isFinalGatewayStatus(status.code) && !statusShowsFundsReceived(status.code) && order.transactions.length === 0;
}

/** What the app keeps of a gateway order, from the creation answer or (after an unknown outcome) the listing. */
function orderData(order: CreateOrderResponse | FoundOrder): AnswerColumns {
  if (!("web_url" in order)) {
    return {
      gatewayOrderId: order.identifier,
      gatewayStatus: order.status.code,
      inputCurrency: order.currency_id,
      cryptoAmount: order.crypto_amount,
      address: order.address,
      tagMemo: order.tag_memo || null,
      expiresAt: order.expired_time ? new Date(order.expired_time) : null,
    };
  }
  const crypto = "payment_uri" in order ? order : null;
  return {
    gatewayOrderId: order.identifier,
    gatewayWebUrl: order.web_url,
    gatewayStatus: crypto ? "PE" : "NR",
    ...(crypto
      ? { inputCurrency: crypto.input_currency, cryptoAmount: crypto.expected_input_amount, paymentUri: crypto.payment_uri, address: crypto.address, tagMemo: crypto.tag_memo || null }
      : {}),
  };
}

/** Leaves the payment to the next attempt, only while this request holds it: another's claim and orderRequestedAt stay as they are. */
async function releaseClaim(deps: PaymentsDeps, payment: Pick<Payment, "id">, claim: Claim, data: Prisma.PaymentUpdateManyMutationInput = {}): Promise<void> {
  await deps.db.payment.updateMany({ where: { id: payment.id, sessionClaimToken: claim.token }, data: { ...data, sessionClaimUntil: null, sessionClaimToken: null } });
}

/**
 * The gateway order whose reference is this payment's id, "unknown" when the gateway cannot
 * say (a listing holding an order the app could not read cannot: that one may be it).
 * `withCoin`: only an order made with a coin (a coin pick's); one made without a coin for
 * the gateway's page, which the shopper can no longer reach, is not the pick's.
 */
async function findOrderByReference(
  access: ShopGatewayAccess,
  payment: Pick<Payment, "id" | "createdAt" | "shopifyPaymentId">,
  now: Date,
  options: { withCoin?: boolean } = {},
): Promise<FoundOrder | null | "unknown"> {
  // A day's margin on each side, on the app's clock as every other listing's range.
  const listed = await access.client.listOrders({ start: new Date(payment.createdAt.getTime() - 86_400_000), end: new Date(now.getTime() + 86_400_000) });
  if (listed.isErr()) return "unknown";
  return listedOrderByReference(listed.value, payment.shopifyPaymentId, (order) => (!options.withCoin || order.currency_id !== null) && !madeForAnotherPayment(order, payment.id));
}

/**
 * Whether a listed order with this payment's reference was made for another payment: the
 * reference is Shopify's payment id, which two shops on one gateway device may both have, and
 * the app names its own payment in every order's internal_data. An order whose internal_data
 * does not say (another client made it, or the gateway left it out) may still be this one's.
 */
function madeForAnotherPayment(order: Pick<GatewayOrder, "internal_data">, paymentId: string): boolean {
  if (order.internal_data === null) return false;
  try {
    const named = (JSON.parse(order.internal_data) as { payment?: unknown } | null)?.payment;
    return typeof named === "string" && named !== paymentId;
  } catch {
    return false;
  }
}

async function adoptFoundOrder(deps: PaymentsDeps, payment: SessionPayment, claim: Claim, found: FoundOrder): Promise<SessionAnswer> {
  const mismatch = orderTermsMismatch(found, payment);
  if (mismatch) return refuseOrderOfOtherTerms(deps, payment, claim, found.identifier, mismatch);
  const toAppPage = { status: 200, body: { redirect_url: deps.links.paymentPageUrl(payment) } };
  // The listing has no web_url: an order with a coin can be paid on the app's own page.
  if (found.currency_id) return finish(deps, payment, claim, toAppPage, "awaiting_payment", orderData(found), { adopted: true });
  // One still waiting for a coin choice cannot be reached again: it has no address, so it
  // takes no money, and the gateway cancels it after a day. The shopper picks the coin on the
  // app's own page instead, which creates the payment's order with it (without looking this
  // one up again).
  return finish(deps, payment, claim, toAppPage, "started", { orderRequestedAt: null }, { page: "app", unreachableOrder: found.identifier });
}

export type ChooseCurrencyResult =
  | { ok: true; payment: Payment }
  | { ok: false; reason: "not_found" | "already_chosen" | "not_open" | "no_credentials" | "rejected" | "unavailable"; message: string }
  /** The gateway made this payment's order for other terms (refuseOrderOfOtherTerms): no coin can take the payment. */
  | { ok: false; reason: "cannot_take_crypto"; message: string }
  /** The gateway refused the coin for the payment's amount (`message`: its words): the coin is no longer offered for this payment. */
  | { ok: false; reason: "out_of_limits"; message: string };

const CANNOT_TAKE_CRYPTO = {
  ok: false,
  reason: "cannot_take_crypto",
  message: "This payment cannot be taken in crypto: go back to the checkout and choose another payment method.",
} as const satisfies ChooseCurrencyResult;

/**
 * The app's own payment page (API-gateway mode): the shopper picked a coin, so the
 * gateway order is created now with that input_currency, once.
 */
export async function createOrderWithCurrency(deps: PaymentsDeps, paymentId: string, inputCurrency: string): Promise<ChooseCurrencyResult> {
  const payment = await deps.db.payment.findUnique({ where: { id: paymentId }, include: { shop: true } });
  if (!payment) return { ok: false, reason: "not_found", message: "No such payment." };
  if (payment.gatewayOrderId) return { ok: false, reason: "already_chosen", message: "A coin was already chosen for this payment." };
  const notOpen = { ok: false as const, reason: "not_open" as const, message: "This payment is no longer open." };
  if (payment.state !== "started") return notOpen;
  // An earlier pick found the payment's order made for other terms: every pick would find it
  // again (by its reference), so none is tried until a person has seen to the flag.
  if (payment.attention === "amount_mismatch" && payment.attentionResolvedAt === null) return CANNOT_TAKE_CRYPTO;
  const access = deps.gateways.forShop(payment.shop, payment.gatewayEnv as GatewayEnv);
  if (!access) return { ok: false, reason: "no_credentials", message: "The shop cannot take crypto payments right now." };
  const now = deps.clock.now();
  const claim = newClaim(now);
  const busy = { ok: false as const, reason: "already_chosen" as const, message: "This payment is being prepared; reload the page." };
  // One creator at a time: the claim prevents a double click from creating two orders.
  // Only while the payment is still open: the reconciler rejects one whose coin was never
  // chosen after a day, and a pick racing it must not bring it back. orderRequestedAt is left as
  // it is (the row was read before the claim): it is written just before the order is sent.
  const claimed = await deps.db.payment.updateMany({
    where: { id: payment.id, state: "started", gatewayOrderId: null, OR: [{ sessionClaimUntil: null }, { sessionClaimUntil: { lt: now } }] },
    data: { sessionClaimUntil: claim.until, sessionClaimToken: claim.token },
  });
  /** Whether the payment is still open now: taken over by another pick, or ended meanwhile. */
  const stillOpen = async () => {
    const current = await deps.db.payment.findUnique({ where: { id: payment.id }, select: { state: true } });
    return current !== null && isOpenPaymentState(current.state);
  };
  if (claimed.count !== 1) return (await stillOpen()) ? busy : notOpen;
  return whileHolding(deps, payment, claim, async (): Promise<ChooseCurrencyResult> => {
    // Written only while the claim is still this pick's: a pick that outlived its claim leaves
    // the payment to the one that took it over (an order it made stays unused and expires).
    const adopt = async (order: CreateOrderResponse | FoundOrder, adopted: boolean): Promise<ChooseCurrencyResult> => {
      const mismatch = orderTermsMismatch(order, payment);
      if (mismatch) return refusePickedOrderOfOtherTerms(order.identifier, mismatch);
      try {
        const updated = await deps.db.payment.update({
          where: { id: payment.id, sessionClaimToken: claim.token, state: "started" },
          data: {
            ...orderData(order),
            state: "awaiting_payment",
            sessionClaimUntil: null,
            sessionClaimToken: null,
            // An adopted order (made by an earlier pick) records its own coin, not the one just picked.
            events: {
              create: {
                type: "order_created",
                detail: JSON.stringify({ currency: ("currency_id" in order ? order.currency_id : null) ?? inputCurrency, page: "app", ...(adopted ? { adopted } : {}) }),
                at: now,
              },
            },
          },
        });
        return { ok: true, payment: updated };
      } catch (error) {
        if (!(error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2025")) throw error;
        if (!(await stillOpen())) {
          // Rejected meanwhile (Shopify has been told): the order stays unused and expires.
          deps.logger.warn("The payment ended while its coin pick created an order: the order is left unused", { paymentId: payment.id, gatewayOrderId: order.identifier });
          await releaseClaim(deps, payment, claim);
          return notOpen;
        }
        deps.logger.warn("Another coin pick took the payment over: its order stands", { paymentId: payment.id, gatewayOrderId: order.identifier });
        return busy;
      }
    };
    /**
     * An order made for other terms than the payment's (refuseOrderOfOtherTerms) is not shown
     * to the shopper, and the payment is flagged for the merchant. The next pick finds the
     * same order by its reference, and is refused the same way: the shopper goes back to the
     * checkout, and the reconciler ends the payment as one whose coin was never chosen.
     */
    const refusePickedOrderOfOtherTerms = async (gatewayOrderId: string, mismatch: string): Promise<ChooseCurrencyResult> => {
      deps.logger.error("Gateway order made for other terms than the payment's: not offered to the shopper", { paymentId: payment.id, gatewayOrderId, mismatch });
      const flag: AttentionFlag = { reason: "amount_mismatch", detail: `${mismatch} Its order ${gatewayOrderId} was not shown to the shopper.` };
      await deps.db.$transaction([
        deps.db.payment.updateMany({ where: { id: payment.id, sessionClaimToken: claim.token }, data: { ...flagColumns(flag), sessionClaimUntil: null, sessionClaimToken: null } }),
        deps.db.paymentEvent.create({ data: { paymentId: payment.id, ...flagEvent(flag, deps.clock.now()) } }),
      ]);
      return CANNOT_TAKE_CRYPTO;
    };
    const unavailable = { ok: false as const, reason: "unavailable" as const, message: "The payment service is not reachable right now; try again in a moment." };

    // An earlier pick may have created the order without learning its answer: look it up first.
    // Read again now that the claim is this pick's: that pick's whole attempt may have come
    // between the read above and the claim, and the order it may have made is looked up too.
    const { orderRequestedAt } = await deps.db.payment.findUniqueOrThrow({ where: { id: payment.id }, select: { orderRequestedAt: true } });
    if (orderRequestedAt !== null) {
      const found = await lookUpRequestedOrder(deps, access, { ...payment, orderRequestedAt }, { withCoin: true });
      if (found === "unknown") {
        await releaseClaim(deps, payment, claim);
        return unavailable;
      }
      // One that ended with nothing received is left as it is: the coin just picked gets a new order.
      if (found && !endedEmpty(found)) return adopt(found, true);
      if (found) deps.logger.info("The order an earlier coin pick made ended unpaid: a new one is made for this pick", { paymentId: payment.id, gatewayOrderId: found.identifier, status: found.status.code });
    }
    const address = payment.billingAddress ? (JSON.parse(payment.billingAddress) as NonNullable<PaymentSessionRequest["customer"]>["billing_address"]) : undefined;
    const requestLike = {
      customer: { email: payment.customerEmail, phone_number: payment.customerPhone, locale: payment.merchantLocale, billing_address: address },
      merchant_locale: payment.merchantLocale,
    } as PaymentSessionRequest;
    const prepared = await access.client.prepareOrder({ ...orderRequest(deps, payment.shop, access.env, payment, requestLike), input_currency: inputCurrency });
    const created = await sendWhileClaimed(deps, payment, claim, prepared);
    if (created === null) return busy;
    if (created.isErr()) {
      // After an unknown outcome orderRequestedAt stays, so the next pick looks the order up
      // first; unless the gateway answered that it failed (a 5xx of its own, so it was done
      // with the request) and the lookup proves no order exists: the next pick then creates
      // the order at once, as nothing can duplicate it.
      let provedNoOrder = false;
      if (created.error.kind === "outcome_unknown") {
        const found = await findOrderByReference(access, payment, deps.clock.now(), { withCoin: true });
        if (found && found !== "unknown") return adopt(found, true);
        const cause = created.error.cause as GatewayError;
        provedNoOrder = listingProvesNoOrder(cause, found);
      }
      const error = created.error;
      // Only the gateway's refusal (its 404) rules the coin out for the payment: a failure (a
      // 5xx, a timeout) says nothing of the coin. A refusal that names the coin's amount limits
      // rules out the coins they imply too; one in other words, this coin alone, so that a
      // shopper picking it again does not spend one of the device's order slots each time. It
      // is remembered before the claim is released, so the next pick already goes without it.
      const cause = refusalCause(error, requestLike.customer);
      // Read from the gateway's own words: the shopper's details are taken out of what is kept.
      const refused = error.kind === "rejected" && error.status === 404;
      const named = refused ? amountLimitIn(error.detail) : null;
      if (refused) {
        const limit = named ?? "none_named";
        await deps.db.paymentEvent.create({
          data: { paymentId: payment.id, type: COIN_REFUSED_EVENT, detail: JSON.stringify({ currency: inputCurrency, limit, cause: cause ?? undefined }), at: deps.clock.now() },
        });
      }
      await releaseClaim(deps, payment, claim, error.kind === "outcome_unknown" && !provedNoOrder ? {} : { orderRequestedAt: null });
      if (named && cause) return { ok: false, reason: "out_of_limits", message: cause };
      if (error.kind === "rejected") return { ok: false, reason: "rejected", message: cause ?? error.message };
      if (error.kind === "invalid_request") return { ok: false, reason: "rejected", message: error.message };
      return unavailable;
    }
    return adopt(created.value, false);
  });
}
