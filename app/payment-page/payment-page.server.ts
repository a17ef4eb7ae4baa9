// The shopper's payment page (API-gateway mode) as data: finding the payment a signed
// link points to, where the shopper is (choosing a coin, paying, confirming, done),
// everything needed to pay (QR code, address, exact amount, tag/memo or Lightning
// invoice, expiry) or, when too little arrived, the rest still due — only while the
// shopper still has something to pay and the order's time has not run out — and the rare
// gateway read that keeps the page current where notifications do not.
import { z } from "zod";
import { checkPaymentNow, claimRead, SHOPPER_WAITING_READ } from "~/payments/check-payment";
import { agreedBodyStatus, webhookBody } from "~/payments/process-webhooks";
import type { GatewayCurrency } from "~/gateway/schemas";
import type { GatewayEnv } from "~/payments/deps";
import { isOpenPaymentState, shopifyNextPage } from "~/payments/payment-state";
import { decideForGatewayStatus } from "~/payments/status-mapping";
import { receivedFiatShown } from "~/gateway/money";
import { isGatewayStatus } from "~/gateway/statuses";
import { keepsReserve } from "~/payments/reconcile";
import type { AppServices } from "~/services.server";
import { SHOPPER_ABANDONED_EVENT } from "~/payments/handle-return";
import { shopGateway } from "~/shops/gateway-directory.server";
import type { Payment, Shop } from "../../generated/prisma/sqlite/client";
import { AMOUNT_LIMITS, COIN_REFUSED_EVENT, isLightning, memoKind, offerableCoins, offeredCoinsOf, type CoinChoice, type RefusedCoin } from "./coins";
import { pageLanguage, type PageLanguage } from "./language";
import { Exact, paidPercentage, paymentProgress, remainderPaymentUri } from "./progress";
import { paymentQrSvg } from "./qr.server";
import { shopperMoney, shopperNumber, shopperPercentage } from "./shopper-money";
import type { MemoKind, ShopperStatus } from "./texts";
import { asksForPayment, statusAt } from "./timing";
import { parseStoredJson } from "~/lib/stored-json";

/** The payment with its shop and the amounts of its on-chain transactions, which tell a partial payment from a full one. */
export type PaymentWithShop = Payment & { shop: Shop; transactions: { amount: string }[] };
type PaymentWithAmounts = Payment & { transactions: readonly { amount: string }[] };

const PAGE_INCLUDE = { shop: true, transactions: { select: { amount: true } } } as const;

export const linkSchema = z.object({
  paymentId: z.string().regex(/^[A-Za-z0-9_-]{10,64}$/),
  sig: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/),
});

/** The payment a signed link names, or null (unknown payment, or a signature that does not match). */
export async function paymentForLink(services: AppServices, params: { paymentId?: string | undefined }, url: URL): Promise<PaymentWithShop | null> {
  const parsed = linkSchema.safeParse({ paymentId: params.paymentId, sig: url.searchParams.get("sig") ?? "" });
  if (!parsed.success) return null;
  const payment = await services.db.payment.findUnique({ where: { id: parsed.data.paymentId }, include: PAGE_INCLUDE });
  if (!payment || !services.links.verify(payment, parsed.data.sig)) return null;
  return payment;
}

export type PageStage = "choose" | "pay" | "gateway" | "done";

export function pageStage(payment: Payment): PageStage {
  if (!isOpenPaymentState(payment.state)) return "done";
  if (!payment.gatewayOrderId) return "choose";
  return hasPaymentData(payment) ? "pay" : "gateway";
}

/**
 * Enough to pay: the gateway's payment URI, or (for an order adopted from the gateway's
 * listing after an unknown outcome, which carries no URI) the coin, address and amount.
 */
function hasPaymentData(payment: Payment): boolean {
  return payment.paymentUri !== null || (payment.inputCurrency !== null && payment.address !== null && payment.cryptoAmount !== null);
}

function isPartlyPaid(percentage: string | null): boolean {
  return paidPercentage(percentage)?.lt(100) ?? false;
}

/**
 * Money arrived, but less than the crypto amount. Any payment seen moves the order to AC,
 * whatever its size: a wallet that takes its fee out of the amount sends too little, and
 * unless the rest follows the order ends IA with the money held at the gateway. The
 * on-chain amounts decide; before the order's transactions were read, the percentage does.
 */
function isShort(payment: PaymentWithAmounts): boolean {
  const progress = paymentProgress(payment.cryptoAmount, payment.transactions);
  if (progress) return progress.received.gt(0) && progress.remaining.gt(0);
  return isPartlyPaid(payment.percentage);
}

/**
 * Where the shopper is at `now`. Once the order's time has run out, a payment still waiting
 * reads expired and a partial one partial_expired, before the gateway says so: a partly
 * paid order stays AC, and the rest sent late would end it OC.
 */
export function shopperStatus(payment: PaymentWithAmounts, now: Date, held: HeldMoney = null): ShopperStatus {
  return statusAt(statusFromState(payment, held), payment.expiresAt ? payment.expiresAt.getTime() : null, now.getTime());
}

/**
 * Money the gateway notified (a verified AC notification that agrees with the payment) while
 * the payment still awaits it: the inbox takes such a notification in without reading the
 * order, and only a read moves the payment on. "covered" when the notified amounts reach the
 * crypto amount, "short" when they do not (or cannot tell); null without such a notification.
 */
export type HeldMoney = "covered" | "short" | null;

async function heldMoneySeen(services: AppServices, payment: Payment): Promise<HeldMoney> {
  if (payment.state !== "awaiting_payment" || !payment.gatewayOrderId) return null;
  const hooks = await services.db.gatewayWebhook.findMany({
    where: { shopId: payment.shopId, gatewayEnv: payment.gatewayEnv, orderId: payment.gatewayOrderId, status: "AC" },
    select: { rawBody: true, orderId: true },
    orderBy: { receivedAt: "desc" },
  });
  for (const hook of hooks) {
    const body = webhookBody(hook);
    if (!body || agreedBodyStatus(body, hook, payment)?.code !== "AC") continue;
    const expected = body.crypto_amount ?? payment.cryptoAmount;
    if (!expected || body.unconfirmed_amount === undefined || body.confirmed_amount === undefined) return "short";
    // Summed exactly: coin amounts carry more digits than decimal.js keeps by default (progress.ts).
    const received = new Exact(body.unconfirmed_amount).plus(body.confirmed_amount);
    return received.gte(expected) ? "covered" : "short";
  }
  return null;
}

/** Whether the gateway status stored is one the status mapping resolves on (the order is paid). */
function gatewayShowsPaid(code: string | null): boolean {
  return isGatewayStatus(code) && decideForGatewayStatus(code).kind === "resolve";
}

function statusFromState(payment: PaymentWithAmounts, held: HeldMoney = null): ShopperStatus {
  // A status the app does not know (RF, say), read or notified while the payment is open: it
  // is left for a person (status-mapping's review), and the order may be refunded, cancelled
  // or paid. Nothing is asked for, and a shopper who paid is told not to pay again.
  if (isOpenPaymentState(payment.state) && payment.gatewayStatus !== null && !isGatewayStatus(payment.gatewayStatus)) return "review";
  // Money notified, not read yet: received (and confirming), or part of it (the rest due not
  // known until the order is read); never asked for again.
  if (payment.state === "awaiting_payment" && held !== null) return held === "covered" ? "confirming" : "partial";
  // Paid at the gateway while the payment stays open: held for a person (an order for other
  // terms than the payment's, never paid on). The shopper sent the money: never asked again.
  if (isOpenPaymentState(payment.state) && gatewayShowsPaid(payment.gatewayStatus)) return "confirming";
  // Money seen (AC) while the payment stays open awaiting it: held for a person as well (an
  // order for other terms), not yet paid at the gateway. The rest is asked for when short;
  // what arrived is never asked for again.
  if (payment.state === "awaiting_payment" && payment.gatewayStatus === "AC") return isShort(payment) ? "partial" : "confirming";
  switch (payment.state) {
    case "paid":
      return "paid";
    case "failed":
    case "not_started":
      return payment.gatewayStatus === "EX" || payment.gatewayStatus === "CA" ? "expired" : "failed";
    case "confirming":
      return isShort(payment) ? "partial" : "confirming";
    case "started":
      return payment.gatewayOrderId ? "waiting" : "choosing";
    default:
      return isShort(payment) ? "partial" : "waiting";
  }
}

/** Where the shopper goes once the payment has ended: back through the app's return route. */
export function finalDestination(services: AppServices, payment: Payment): string | null {
  if (payment.state === "paid") return services.links.returnUrl(payment, "ok");
  if (payment.state === "failed" || payment.state === "not_started") return services.links.returnUrl(payment, "ko");
  return null;
}

/**
 * Whether the shopper gave this payment up at a return ("pay another way", or the gateway's
 * page sent them back without paying): the return recorded it, and sent them to the checkout
 * to choose again.
 */
export async function shopperLeft(services: AppServices, payment: Payment): Promise<boolean> {
  if (!isOpenPaymentState(payment.state)) return false;
  return (await services.db.paymentEvent.count({ where: { paymentId: payment.id, type: SHOPPER_ABANDONED_EVENT } })) > 0;
}

/**
 * What the page and its live status both go by beyond the payment's row, read the same way for
 * each so the two never disagree: money only a notification held so far reports, and whether
 * the shopper left the payment.
 */
export async function pageFacts(services: AppServices, payment: Payment): Promise<{ held: HeldMoney; left: boolean }> {
  const [held, left] = await Promise.all([heldMoneySeen(services, payment), shopperLeft(services, payment)]);
  return { held, left };
}

/**
 * Where the page sends a shopper who gave the payment up and comes back to it (the browser's
 * back button, the link kept in a tab) while nothing has arrived: back to the checkout, not to
 * the coin list or the QR code of an order they left. Paying it now could pay the checkout
 * twice: it may have been paid another way since, and Shopify takes one payment per checkout.
 * Once money has arrived the page shows it, as for any payment.
 */
function afterLeaving(payment: PaymentWithAmounts, status: ShopperStatus, left: boolean): string | null {
  return left && (status === "choosing" || status === "waiting") && receivedCrypto(payment) === null ? payment.cancelUrl : null;
}

/** Where the page (and its live status) sends the shopper now; null while it shows the payment. */
function pageDestination(services: AppServices, payment: PaymentWithAmounts, status: ShopperStatus, left: boolean): string | null {
  return finalDestination(services, payment) ?? afterLeaving(payment, status, left);
}

/**
 * Where the page sends the shopper of a shop that uninstalled the app: a payment whose outcome
 * Shopify took goes on through its return link (which sends it to Shopify's next page), as
 * before the uninstall; one still open with no gateway order asked for (the shopper had not
 * picked a coin) goes back to the checkout, to pay another way, as nothing can have been sent
 * for it; null for any other, which can no longer reach its order.
 */
export function destinationAfterUninstall(services: AppServices, payment: Payment): string | null {
  if (shopifyNextPage(payment)) return services.links.returnUrl(payment, payment.shopifyOutcome === "resolved" ? "ok" : "ko");
  if (isOpenPaymentState(payment.state) && !payment.gatewayOrderId && !payment.orderRequestedAt) return payment.cancelUrl;
  return null;
}

export interface PayInstructions {
  coin: string;
  /** The coin's network as the gateway lists it, when the list can be read. */
  network: string | null;
  amount: string;
  address: string | null;
  invoice: string | null;
  tagMemo: string | null;
  memoKind: MemoKind | null;
  /** A coin that needs a tag/memo came without one: the shopper must not pay. */
  memoMissing: boolean;
  /**
   * The gateway's payment URI as a QR code (for the rest still due after a partial payment);
   * null when only the address and amount are known, or when the URI cannot ask for the rest.
   */
  qrSvg: string | null;
  /**
   * The same request as a link a phone opens in its wallet app (a shopper cannot scan their
   * own screen); null without a QR code, or when the URI's scheme is not a payment one.
   */
  walletUri: string | null;
}

/**
 * The payment schemes a wallet app registers. The URI comes from the gateway: only these become
 * a link, never another scheme (javascript:, data:, http:...).
 */
const WALLET_SCHEMES = new Set(["bitcoin", "bitcoincash", "litecoin", "dogecoin", "dash", "ethereum", "polygon", "tron", "solana", "ripple", "stellar", "web+stellar", "algorand", "lightning", "binancecoin", "bnb"]);

/**
 * The coin a wallet pays in when it reads a payment URI of a chain that also carries tokens:
 * "ethereum:<address>?amount=10" is 10 ether to a wallet, whatever coin the order is in.
 */
const NATIVE_COINS: Readonly<Record<string, readonly string[]>> = {
  ethereum: ["ETH"],
  polygon: ["MATIC", "POL"],
  tron: ["TRX"],
  solana: ["SOL"],
  binancecoin: ["BNB"],
  bnb: ["BNB"],
  algorand: ["ALGO"],
  stellar: ["XLM"],
  "web+stellar": ["XLM"],
  ripple: ["XRP"],
};

/**
 * Whether a wallet that reads the gateway's payment URI pays in the order's coin. On a chain
 * that carries tokens, a URI naming no token contract (EIP-681's "<contract>/transfer") asks
 * for the chain's own coin, so it is offered only when that is the order's coin: its symbol
 * starts with the chain's ticker ("ETH", "ETH_TEST3") and the gateway's name for it ends with
 * it ("Ethereum Goerli ETH"; not "USD Coin USDC", nor "Rocket Pool ETH" as RETH_ERC20). When
 * the coin list cannot be read, the symbol must be that ticker itself. Otherwise a shopper
 * paying 49.90 in USDC would be asked by their wallet for 49.90 ETH.
 */
export function paysInOrderCoin(uri: string, symbol: string, coin: Pick<GatewayCurrency, "name"> | null): boolean {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):([^?#]*)/.exec(uri);
  const natives = match ? NATIVE_COINS[match[1]!.toLowerCase()] : undefined;
  if (!natives) return true;
  if (/\/transfer$/i.test(match![2]!)) return true;
  const native = (ticker: string | undefined) => ticker !== undefined && natives.includes(ticker.toUpperCase());
  if (!coin) return native(symbol);
  return native(symbol.split("_")[0]) && native(coin.name.trim().split(/\s+/).pop());
}

export function walletUriOf(uri: string | null): string | null {
  if (uri === null) return null;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  return scheme !== undefined && WALLET_SCHEMES.has(scheme) ? uri : null;
}

/**
 * A Lightning invoice as a link a wallet app opens: the gateway gives a bare BOLT11 invoice
 * (the QR code shows it so), which a phone hands to its Lightning wallet as lightning:<invoice>.
 * Only an invoice's characters (bech32) are prefixed; a URI with a scheme is taken as any other.
 */
function lightningWalletUri(uri: string | null): string | null {
  return walletUriOf(uri !== null && /^ln[a-z0-9]+$/i.test(uri) ? `lightning:${uri}` : uri);
}

export interface PaymentPageView {
  paymentId: string;
  language: PageLanguage;
  shopName: string;
  amount: string;
  stage: PageStage;
  status: ShopperStatus;
  percentage: string | null;
  /** The coin chosen, once there is one. */
  coin: string | null;
  /** The fiat value of what arrived, as the gateway states it (received_amount). */
  received: string | null;
  /** What arrived in the coin, once the order's transactions were read. */
  receivedCrypto: string | null;
  /**
   * What arrived in the coin, as the shopper reads it: in the page's notation ("0,0079" in
   * Spain). Only read, never copied: the amounts to copy into a wallet stay as the gateway
   * gave them.
   */
  receivedCryptoText: string | null;
  /** The gateway's percentage paid, in the page's notation ("50.0%", "50,0 %"). */
  percentageText: string | null;
  /** The crypto amount still due after a partial payment: exact, copied as it is. */
  remaining: string | null;
  /**
   * Partly paid, by the gateway's percentage, before the order's transactions are known: the
   * rest due cannot be worked out (the percentage is rounded), and the gateway's payment
   * request is for the full amount, so nothing is asked for until it can be.
   */
  restUnknown: boolean;
  coins: CoinChoice[] | null;
  /** What to send: only while the shopper still has something to pay (waiting, or partly paid in time). */
  pay: PayInstructions | null;
  gatewayUrl: string | null;
  /**
   * The shopper is asked to pay an order the page has no means to pay with (neither details
   * nor the gateway's page: a Lightning order adopted after its creation answer was lost):
   * the page offers only another way to pay.
   */
  unpayable: boolean;
  expiresAtMs: number | null;
  nowMs: number;
  statusUrl: string;
  anotherWayUrl: string;
  standbyUrl: string;
  redirectUrl: string | null;
}

export function shopName(shopDomain: string): string {
  return shopDomain.replace(/\.myshopify\.com$/, "");
}

const refusalSchema = z.object({ currency: z.string(), limit: z.enum(AMOUNT_LIMITS) });

/** The coins the gateway refused for this payment's amount, as its timeline remembers them. */
async function refusedCoins(services: AppServices, paymentId: string): Promise<RefusedCoin[]> {
  const events = await services.db.paymentEvent.findMany({ where: { paymentId, type: COIN_REFUSED_EVENT }, select: { detail: true } });
  return events.flatMap((event) => {
    const refusal = parseStoredJson(refusalSchema, event.detail);
    return refusal ? [{ symbol: refusal.currency, limit: refusal.limit }] : [];
  });
}

/** The coins this payment can be paid with now; null when the gateway cannot be asked. */
export async function coinsFor(services: AppServices, payment: PaymentWithShop): Promise<CoinChoice[] | null> {
  const gateway = shopGateway(services.gateways, payment.shop, payment.gatewayEnv as GatewayEnv);
  if (gateway.state !== "connected") return null;
  const { access } = gateway;
  const [currencies, refused] = await Promise.all([services.gateways.currencies(access, SHOPPER_WAITING_READ, { pauseAfterFailure: true }), refusedCoins(services, payment.id)]);
  if (!currencies) return null;
  return offerableCoins(currencies, offeredCoinsOf(payment.shop, access.env), payment.amount, payment.currency, refused);
}

/**
 * The gateway's entry of the order's coin (only for its network's name and whether it takes a
 * memo): from the coin list held, else asked for once, briefly, and only while the quota keeps
 * its reserve for new orders. Everything to pay with is stored on the payment already.
 */
async function gatewayCoin(services: AppServices, payment: PaymentWithShop, symbol: string) {
  const gateway = shopGateway(services.gateways, payment.shop, payment.gatewayEnv as GatewayEnv);
  if (gateway.state !== "connected") return null;
  const { access } = gateway;
  const askIf = async () => keepsReserve(await access.client.quotaRemaining());
  const currencies = await services.gateways.currencies(access, SHOPPER_WAITING_READ, { askIf, pauseAfterFailure: true });
  return currencies?.find((c) => c.symbol === symbol) ?? null;
}

async function instructions(services: AppServices, payment: PaymentWithShop, remaining: string | null): Promise<PayInstructions | null> {
  if (!hasPaymentData(payment) || !payment.inputCurrency) return null;
  const coin = await gatewayCoin(services, payment, payment.inputCurrency);
  const lightning = isLightning(payment.inputCurrency) || !payment.address;
  // A Lightning invoice only ever comes in the payment URI.
  if (lightning && !payment.paymentUri) return null;
  const kind = lightning ? null : memoKind(payment.inputCurrency, coin?.blockchain);
  // After a partial payment the gateway's URI would ask for the full amount again: the QR
  // code asks for the rest, or is left out when the URI cannot say so.
  let qrUri = payment.paymentUri;
  if (remaining !== null) qrUri = qrUri && payment.cryptoAmount ? remainderPaymentUri(qrUri, payment.cryptoAmount, remaining) : null;
  // A coin paid with a tag/memo: a wallet that reads a request without it sends the money
  // without it, and the money is lost (SPEC.md's payment_uri is only "scheme:<address>?amount=").
  // The QR code and the wallet link are offered only when the request carries the tag/memo;
  // otherwise the shopper copies the address, the amount and the tag/memo.
  if (qrUri !== null && !lightning && (kind !== null || payment.tagMemo) && !(payment.tagMemo && carriesParameterValue(qrUri, payment.tagMemo))) qrUri = null;
  // A token's order whose URI a wallet would read as the chain's own coin: no QR code or link,
  // the shopper copies the address and the amount, under "Send only <coin> on the <network> network".
  // (Asked of any coin but Lightning's: an order given without an address is no invoice.)
  if (qrUri !== null && !isLightning(payment.inputCurrency) && !paysInOrderCoin(qrUri, payment.inputCurrency, coin)) qrUri = null;
  return {
    coin: payment.inputCurrency,
    network: coin?.blockchain ?? null,
    amount: payment.cryptoAmount ?? "",
    address: lightning ? null : payment.address,
    invoice: lightning && payment.paymentUri ? payment.paymentUri.replace(/^lightning:/i, "") : null,
    tagMemo: payment.tagMemo,
    memoKind: kind ?? (payment.tagMemo ? "memo" : null),
    memoMissing: kind !== null && !payment.tagMemo,
    qrSvg: qrUri ? await paymentQrSvg(qrUri) : null,
    walletUri: lightning ? lightningWalletUri(qrUri) : walletUriOf(qrUri),
  };
}

/** Whether one of the URI's query parameters has exactly this value (a tag/memo it carries). */
function carriesParameterValue(uri: string, value: string): boolean {
  const query = uri.split("#")[0]!.split("?").slice(1).join("?");
  return query.split("&").some((param) => {
    const [, given = ""] = param.split(/=(.*)/s);
    try {
      return decodeURIComponent(given.replace(/\+/g, " ")) === value;
    } catch {
      return given === value;
    }
  });
}

export function statusUrl(services: AppServices, payment: Payment): string {
  const page = new URL(services.links.paymentPageUrl(payment));
  return `${page.pathname}/status${page.search}`;
}

/** `left`: shopperLeft. */
export async function paymentPageView(services: AppServices, payment: PaymentWithShop, held: HeldMoney = null, left = false): Promise<PaymentPageView> {
  const stage = pageStage(payment);
  const now = services.clock.now();
  const status = shopperStatus(payment, now, held);
  const paying = asksForPayment(status);
  const progress = paymentProgress(payment.cryptoAmount, payment.transactions);
  const remaining = status === "partial" && progress?.remaining.gt(0) ? progress.remaining.toFixed() : null;
  const language = pageLanguage(payment.merchantLocale);
  const arrived = receivedCrypto(payment);
  const restUnknown = status === "partial" && remaining === null;
  const redirectUrl = pageDestination(services, payment, status, left);
  // A page that sends the shopper elsewhere asks the gateway for nothing (its coin list counts against the quota).
  const shown = redirectUrl === null;
  const pay = shown && stage === "pay" && paying && !restUnknown ? await instructions(services, payment, remaining) : null;
  const gatewayUrl = stage === "gateway" && paying ? payment.gatewayWebUrl : null;
  return {
    paymentId: payment.id,
    language,
    shopName: shopName(payment.shop.shopDomain),
    amount: shopperMoney(payment.amount, payment.currency, payment.merchantLocale, language),
    stage,
    status,
    percentage: payment.percentage,
    coin: payment.inputCurrency,
    // The gateway states received_amount in the order's fiat, as a float ("24.5", "1000.0",
    // "24.499999999999996"): shown to the fiat's minor digits.
    received: payment.receivedAmount ? shopperMoney(receivedFiatShown(payment.receivedAmount, payment.currency), payment.currency, payment.merchantLocale, language) : null,
    receivedCrypto: arrived,
    receivedCryptoText: arrived === null ? null : shopperNumber(arrived, payment.merchantLocale, language),
    percentageText: payment.percentage ? shopperPercentage(payment.percentage, payment.merchantLocale, language) : null,
    remaining,
    restUnknown,
    coins: shown && stage === "choose" ? await coinsFor(services, payment) : null,
    pay,
    gatewayUrl,
    unpayable: shown && paying && !restUnknown && pay === null && gatewayUrl === null && (stage === "pay" || stage === "gateway"),
    expiresAtMs: payment.expiresAt ? payment.expiresAt.getTime() : null,
    nowMs: now.getTime(),
    statusUrl: statusUrl(services, payment),
    anotherWayUrl: services.links.returnUrl(payment, "ko"),
    standbyUrl: services.links.returnUrl(payment, "standby"),
    redirectUrl,
  };
}

/** What the page's live status asks for every few seconds. */
export interface PaymentStatusView {
  stage: PageStage;
  status: ShopperStatus;
  percentage: string | null;
  /**
   * What arrived in the coin (the view's receivedCrypto): it moves when the order's
   * transactions become known, or another partial payment arrives, while the status and
   * the rounded percentage may not, and the page must then show the rest due again.
   */
  receivedCrypto: string | null;
  expiresAtMs: number | null;
  nowMs: number;
  redirectUrl: string | null;
}

export function paymentStatusView(services: AppServices, payment: PaymentWithAmounts, held: HeldMoney = null, left = false): PaymentStatusView {
  const now = services.clock.now();
  const status = shopperStatus(payment, now, held);
  return {
    stage: pageStage(payment),
    status,
    percentage: payment.percentage,
    receivedCrypto: receivedCrypto(payment),
    expiresAtMs: payment.expiresAt ? payment.expiresAt.getTime() : null,
    nowMs: now.getTime(),
    redirectUrl: pageDestination(services, payment, status, left),
  };
}

/** What arrived in the coin, once the order's transactions are known. */
function receivedCrypto(payment: PaymentWithAmounts): string | null {
  const progress = paymentProgress(payment.cryptoAmount, payment.transactions);
  return progress?.received.gt(0) ? progress.received.toFixed() : null;
}

/** A gateway read is allowed at most this often per payment, however many pages poll. */
export const REFRESH_MIN_INTERVAL_MS = 15_000;
/** Without a reason to look sooner, the page relies on notifications for this long. */
export const REFRESH_QUIET_MS = 60_000;
/**
 * After the order's time ran out (and a read learned how it ended), the page reads it no more
 * often than this: a partly paid order stays open at the gateway for days (until Shopify's
 * window closes) and asks nothing more of the shopper, so a tab left open on it would
 * otherwise spend about 1,440 of the device's 2,000 daily calls, down to the reserve kept for
 * new orders (and the reconciler's listings with it). Notifications still arrive meanwhile.
 */
export const EXPIRED_QUIET_MS = 15 * 60_000;

async function refreshReason(services: AppServices, payment: PaymentWithShop, now: Date): Promise<boolean> {
  if (!payment.gatewayOrderId) return false;
  if (payment.state !== "awaiting_payment" && payment.state !== "confirming") return false;
  if (!payment.expiresAt) return true; // the countdown needs the order's expiry
  // The last read that answered (anyone's), and the last one begun for a page or a merchant,
  // answered or not: reads are spaced on the later, so a gateway failing the page's reads is
  // not asked more often, while the reconciler still sees the order as unread.
  const last = payment.lastCheckedAt?.getTime() ?? 0;
  const tried = Math.max(last, payment.readClaimedAt?.getTime() ?? 0);
  const sinceTried = now.getTime() - tried;
  // Expired: read once to learn how the order ended (or that a notification was lost), then
  // seldom (EXPIRED_QUIET_MS).
  if (payment.expiresAt.getTime() <= now.getTime()) return tried < payment.expiresAt.getTime() || sinceTried >= EXPIRED_QUIET_MS;
  if (sinceTried >= REFRESH_QUIET_MS) return true;
  if (sinceTried < REFRESH_MIN_INTERVAL_MS) return false;
  // The rest of a partial payment leaves the order in AC, and the gateway notifies status
  // changes only: the shopper is waiting to see it arrive.
  if (shopperStatus(payment, now) === "partial") return true;
  // The notification of money seen (AC) asks nothing of Shopify, so the inbox does not read
  // the order; the page does, to show the shopper what arrived and whether it was enough.
  const notified = await services.db.gatewayWebhook.count({
    where: {
      shopId: payment.shopId,
      gatewayEnv: payment.gatewayEnv,
      orderId: payment.gatewayOrderId,
      receivedAt: { gt: new Date(last) },
      ...(payment.gatewayStatus ? { NOT: { status: payment.gatewayStatus } } : {}),
    },
  });
  return notified > 0;
}

/**
 * Reads the order from the gateway when the page has a reason to and the quota keeps its
 * reserve for new orders, at most once every 15 seconds per payment: the claim on readClaimedAt is atomic, so any number of open
 * pages and instances make one call. Returns the payment as it is afterwards.
 */
export async function refreshIfDue(services: AppServices, payment: PaymentWithShop): Promise<PaymentWithShop> {
  const now = services.clock.now();
  if (!(await refreshReason(services, payment, now))) return payment;
  // New orders come first: below the share of the gateway's quota kept for them, the page
  // waits for notifications and the reconciler.
  const gateway = shopGateway(services.gateways, payment.shop, payment.gatewayEnv as GatewayEnv);
  if (gateway.state !== "connected" || !keepsReserve(await gateway.access.client.quotaRemaining())) return payment;
  if (!(await claimRead(services.db, payment.id, now, REFRESH_MIN_INTERVAL_MS))) return payment;
  const result = await checkPaymentNow(services, payment.shopId, payment.id, { budget: SHOPPER_WAITING_READ });
  if (!result.ok) services.logger.warn("Payment page refresh failed", { paymentId: payment.id, reason: result.reason });
  return services.db.payment.findUniqueOrThrow({ where: { id: payment.id }, include: PAGE_INCLUDE });
}
