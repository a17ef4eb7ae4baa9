// The app's own payment page (API-gateway mode): reached through a signed link, the
// shopper picks a coin, then pays by QR code or by copying the address, the exact amount
// and — for XRP, XLM and ALGO — the tag/memo; when too little arrives it asks for the
// rest. A coin the gateway refuses for the amount is not offered again, with the gateway's
// reason shown. Once the payment is received, or the order's time has run out (the countdown
// reaching zero is enough), it asks for nothing more. The page follows the payment live
// and sends the shopper back to Shopify when it ends. It speaks the shopper's language.
// A link that leads to no payment gets a page saying so (404), in the browser's language.
import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { data, redirect, redirectDocument } from "@remix-run/node";
import type { ShouldRevalidateFunction } from "@remix-run/react";
import { Form, isRouteErrorResponse, useActionData, useLoaderData, useNavigation, useRevalidator, useRouteError, useRouteLoaderData } from "@remix-run/react";
import { useCallback, useEffect, useRef, useState } from "react";
import { z } from "zod";
import { postedFields } from "~/admin/form-data";
import { pageRequestFields } from "~/lib/page-requests.server";
import { pageChecks, type PageChecks } from "~/payment-page/checking";
import { acceptedLanguage, languageTag, pageLanguage, type PageLanguage } from "~/payment-page/language";
import type { DocumentLanguageContext } from "~/root";
import {
  coinsFor,
  destinationAfterUninstall,
  pageFacts,
  pageStage,
  paymentForLink,
  paymentPageView,
  refreshIfDue,
  REFRESH_MIN_INTERVAL_MS,
  shopperLeft,
  type PaymentPageView,
  type PaymentStatusView,
} from "~/payment-page/payment-page.server";
import { PAYMENT_PAGE_CSS } from "~/payment-page/styles";
import { fill, pageTexts, type PageTexts, type ShopperStatus } from "~/payment-page/texts";
import { asksForPayment, statusAt } from "~/payment-page/timing";
import { checkPaymentNow, SHOPPER_WAITING_READ } from "~/payments/check-payment";
import { createOrderWithCurrency } from "~/payments/start-payment-session";

/** A link that leads to no payment: the error page says so, in the language the browser asks for. */
function notFound(request: Request) {
  return data({ language: acceptedLanguage(request.headers.get("accept-language")) }, { status: 404 });
}

/**
 * A payment of a shop that uninstalled the app: nothing sent now could reach its order (the
 * return link says the same), in the payment's language. The page answers it as its data (410),
 * not as an error: the document then declares the language the answer is written in.
 */
function shopGone(payment: { merchantLocale: string | null }) {
  return data({ gone: true as const, language: pageLanguage(payment.merchantLocale) }, { status: 410 });
}

/**
 * The answer for a payment of a shop that uninstalled the app: on through the return link to
 * Shopify's next page when Shopify took the payment's outcome, else the "shop gone" answer.
 */
function afterUninstall(services: LoaderFunctionArgs["context"]["services"], payment: Parameters<typeof destinationAfterUninstall>[1]) {
  const onward = destinationAfterUninstall(services, payment);
  return onward ? redirectDocument(onward, 303) : shopGone(payment);
}

/** The error page's language: the one a "not valid" or "unavailable" answer carries, else the browser's (English when not known). */
function errorLanguage(error: unknown, browserLanguage?: string): PageLanguage {
  if (!isRouteErrorResponse(error) || typeof error.data !== "object" || error.data === null) return pageLanguage(browserLanguage);
  const language: unknown = (error.data as Record<string, unknown>).language;
  return typeof language === "string" ? pageLanguage(language) : pageLanguage(browserLanguage);
}

function errorTexts(error: unknown, browserLanguage?: string): { language: PageLanguage; texts: PageTexts["linkNotValid"] } {
  const language = errorLanguage(error, browserLanguage);
  const texts = pageTexts(language);
  const status = isRouteErrorResponse(error) ? error.status : null;
  return { language, texts: status === 404 ? texts.linkNotValid : status === 410 ? texts.shopGone : texts.pageFailed };
}

export const meta: MetaFunction<typeof loader> = ({ data: loaded, error }) => [
  { title: loaded ? ("gone" in loaded ? pageTexts(loaded.language).shopGone.title : loaded.texts.pageTitle) : errorTexts(error).texts.title },
];

/**
 * The document's language (the root sets <html lang> from it): the payment's; on the error
 * page (no data), the browser's, which is the one the error page speaks (errorLanguage).
 */
export const handle = {
  documentLanguage: (loaded: unknown, context: DocumentLanguageContext): string | undefined => {
    if (loaded === undefined || loaded === null) return context.acceptedLanguage;
    const shown = typeof loaded === "object" ? (loaded as { view?: { language?: unknown }; language?: unknown }) : undefined;
    // The payment's page, or its shop-gone answer: the language each is written in.
    const language = shown?.view?.language ?? shown?.language;
    return typeof language === "string" ? language : undefined;
  },
};

// After every answer to a coin pick, refused ones included (a refusal takes coins off the
// list), the page's data is read again, so it shows what the server now offers.
export const shouldRevalidate: ShouldRevalidateFunction = ({ formMethod, defaultShouldRevalidate }) =>
  formMethod !== undefined && formMethod.toUpperCase() !== "GET" ? true : defaultShouldRevalidate;

/**
 * An unexpected failure of the page (its database, say) is logged as every failed page is,
 * and answered 500 with the page's "unavailable" text in the language the browser asks for:
 * the payment, and so its shopper's locale, may be what could not be read. Answers the route
 * throws on purpose (a redirect, a link that leads nowhere) pass as they are.
 */
async function inShoppersLanguage<T>({ request, context }: { request: Request; context: LoaderFunctionArgs["context"] }, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    context.services.logger.error("Page request failed", { ...pageRequestFields(request), error });
    throw data({ language: acceptedLanguage(request.headers.get("accept-language")) }, { status: 500 });
  }
}

export function loader(args: LoaderFunctionArgs) {
  return inShoppersLanguage(args, () => loadPage(args));
}

async function loadPage({ request, params, context }: LoaderFunctionArgs) {
  const { services } = context;
  const found = await paymentForLink(services, params, new URL(request.url));
  if (!found) throw notFound(request);
  if (found.shop.uninstalledAt) return afterUninstall(services, found);
  const payment = await refreshIfDue(services, found);
  const { held, left } = await pageFacts(services, payment);
  const view = await paymentPageView(services, payment, held, left);
  // An ended payment goes back through the return route, which sends the shopper on to Shopify.
  // That route answers whole documents (its waiting page, while Shopify is being told): when the
  // page's scripts read its data again (a poll, or the connection-lost card's retry), the browser
  // loads it as a document, where the router would render it as an empty page of this app.
  if (view.redirectUrl) throw redirectDocument(view.redirectUrl, 303);
  const texts = pageTexts(view.language);
  // Without scripts, as often as a reload may read the gateway for the payment.
  return { view, texts, withoutScripts: pageChecks(new URL(request.url), REFRESH_MIN_INTERVAL_MS / 1000, texts.checking) };
}

const chooseSchema = z.object({ symbol: z.string().min(1).max(24) });

export function action(args: ActionFunctionArgs) {
  return inShoppersLanguage(args, () => pickCoin(args));
}

async function pickCoin({ request, params, context }: ActionFunctionArgs) {
  const { services } = context;
  const payment = await paymentForLink(services, params, new URL(request.url));
  if (!payment) throw notFound(request);
  if (payment.shop.uninstalledAt) throw afterUninstall(services, payment);
  const texts = pageTexts(pageLanguage(payment.merchantLocale));
  const page = new URL(services.links.paymentPageUrl(payment));
  const backToPage = () => redirect(`${page.pathname}${page.search}`, 303);

  const input = chooseSchema.safeParse(await postedFields(request));
  if (!input.success) return data({ error: texts.errors.unknownCoin }, { status: 400 });
  // A shopper who gave the payment up is sent back to the checkout by the page (paymentPageView).
  if (pageStage(payment) !== "choose" || (await shopperLeft(services, payment))) return backToPage();
  const coins = await coinsFor(services, payment);
  if (!coins) return data({ error: texts.errors.unavailable }, { status: 503 });
  if (!coins.some((coin) => coin.symbol === input.data.symbol)) return data({ error: texts.errors.unknownCoin }, { status: 400 });

  const created = await createOrderWithCurrency(services, payment.id, input.data.symbol);
  if (!created.ok) {
    switch (created.reason) {
      case "already_chosen":
        return backToPage();
      case "not_found":
        throw notFound(request);
      case "not_open":
        return data({ error: texts.errors.closed }, { status: 409 });
      case "rejected":
        return data({ error: texts.errors.rejected }, { status: 422 });
      case "cannot_take_crypto":
        return data({ error: texts.errors.cannotTakeCrypto }, { status: 422 });
      case "out_of_limits":
        // The coin is no longer offered for this payment: the page shows the coins left, or that none is.
        return data({ error: texts.errors.outOfLimits, reason: fill(texts.errors.gatewaySaid, { reason: created.message }) }, { status: 422 });
      case "no_credentials":
      case "unavailable":
        return data({ error: texts.errors.unavailable }, { status: 503 });
      default: {
        // Every refusal is answered above: one added without its answer fails to compile here.
        const unanswered: never = created;
        throw new Error(`coin pick refusal without an answer: ${JSON.stringify(unanswered)}`);
      }
    }
  }
  // The creation answer has no expiry: one read of the new order gives the countdown. The
  // order made is news from the gateway (lastCheckedAt), and this read is the page's
  // (readClaimedAt): page refreshes wait 15 s, whether it answers or not.
  const madeAt = services.clock.now();
  await services.db.payment.update({ where: { id: payment.id }, data: { lastCheckedAt: madeAt, readClaimedAt: madeAt } });
  const read = await checkPaymentNow(services, payment.shopId, payment.id, { budget: SHOPPER_WAITING_READ });
  if (!read.ok) services.logger.warn("First read of a new order failed", { paymentId: payment.id, reason: read.reason });
  return backToPage();
}

function isStatusView(value: unknown): value is PaymentStatusView {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.stage === "string" &&
    typeof v.status === "string" &&
    typeof v.nowMs === "number" &&
    (v.redirectUrl === null || typeof v.redirectUrl === "string") &&
    (v.receivedCrypto === null || typeof v.receivedCrypto === "string")
  );
}

/**
 * A page the browser brings back from its back/forward cache (Safari keeps even a page served
 * no-store) shows what it showed when it was left, with its polling stopped if it was on its
 * way elsewhere: it is loaded again, and the server decides what the shopper sees (the coin
 * list, the QR code, or the checkout for a shopper who left the payment).
 */
function useReloadWhenRestored(): void {
  useEffect(() => {
    const restored = (event: PageTransitionEvent) => {
      if (event.persisted) window.location.reload();
    };
    window.addEventListener("pageshow", restored);
    return () => window.removeEventListener("pageshow", restored);
  }, []);
}

/**
 * Follows the payment through the status route; reloads the page's data when it moved on.
 * Each answer's server time, with when it arrived, sets the countdown's clock (`rebase`).
 */
function useLiveStatus(view: PaymentPageView, rebase: (serverNowMs: number, receivedAtMs: number) => void): { redirecting: boolean } {
  const revalidator = useRevalidator();
  const [redirecting, setRedirecting] = useState(false);
  const { statusUrl, stage, status, percentage, receivedCrypto, expiresAtMs } = view;
  useEffect(() => {
    let stopped = false;
    const poll = async () => {
      try {
        const response = await fetch(statusUrl, { cache: "no-store", headers: { accept: "application/json" } });
        // The server read its clock just before answering: when the answer arrived, not when its body was read.
        const receivedAtMs = Date.now();
        // The shop uninstalled the app: the page's data, read again, answers so.
        if (response.status === 410 && !stopped) {
          stopped = true;
          revalidator.revalidate();
          return;
        }
        if (!response.ok || stopped) return;
        const live: unknown = await response.json();
        if (!isStatusView(live) || stopped) return;
        rebase(live.nowMs, receivedAtMs);
        if (live.redirectUrl) {
          stopped = true;
          setRedirecting(true);
          const target = live.redirectUrl;
          window.setTimeout(() => window.location.assign(target), 1200);
          return;
        }
        const moved = live.stage !== stage || live.status !== status || live.percentage !== percentage || live.receivedCrypto !== receivedCrypto || live.expiresAtMs !== expiresAtMs;
        if (moved) revalidator.revalidate();
      } catch {
        // A missed poll is retried on the next tick.
      }
    };
    const timer = window.setInterval(poll, 4000);
    return () => {
      stopped = true;
      window.clearInterval(timer);
    };
    // revalidator changes identity on every render; the poll only needs the current snapshot.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [statusUrl, stage, status, percentage, receivedCrypto, expiresAtMs, rebase]);
  return { redirecting };
}

function formatLeft(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(total / 60);
  const seconds = total % 60;
  return `${minutes}:${String(seconds).padStart(2, "0")}`;
}

/** The page data the document came with, by its server time: its clock is set from the document's arrival. */
let documentServerNowMs: number | null = null;

/**
 * When the document's answer began to arrive, on the browser's clock: the server read its
 * clock for the page data just before. Unlike the time the page's scripts run (hydration),
 * it does not count the time they took to load. Null when the browser does not say.
 */
function documentReceivedAtMs(): number | null {
  const entry = typeof performance.getEntriesByType === "function" ? performance.getEntriesByType("navigation")[0] : undefined;
  const responseStart = entry && "responseStart" in entry ? (entry as PerformanceNavigationTiming).responseStart : 0;
  return responseStart > 0 ? Math.round(performance.timeOrigin + responseStart) : null;
}

/**
 * The server's time, ticking every second in the browser while the order has an expiry.
 * Starts from the server's clock so the first client render matches the server's HTML. The
 * offset to the browser's clock is taken from when the page data arrived (the document's
 * arrival on a first load, else the fetch that just ended), and again from every status
 * answer (`rebase`), so a slow load or a stale start does not stay in the countdown.
 */
function useServerNow(serverNowMs: number, expiresAtMs: number | null): { now: number; rebase: (serverNowMs: number, receivedAtMs: number) => void } {
  // Each tick remembers the server time it counts from: newer page data starts it over.
  const [tick, setTick] = useState({ from: serverNowMs, now: serverNowMs });
  // The server's clock minus the browser's; null until the page data's arrival is known.
  const offset = useRef<number | null>(null);
  useEffect(() => {
    documentServerNowMs ??= serverNowMs;
    const receivedAtMs = (serverNowMs === documentServerNowMs ? documentReceivedAtMs() : null) ?? Date.now();
    offset.current = serverNowMs - receivedAtMs;
  }, [serverNowMs]);
  useEffect(() => {
    if (expiresAtMs === null) return;
    const timer = window.setInterval(() => setTick({ from: serverNowMs, now: Date.now() + (offset.current ?? 0) }), 1000);
    return () => window.clearInterval(timer);
  }, [serverNowMs, expiresAtMs]);
  const rebase = useCallback((nowMs: number, receivedAtMs: number) => {
    offset.current = nowMs - receivedAtMs;
  }, []);
  return { now: tick.from === serverNowMs ? tick.now : serverNowMs, rebase };
}

function Countdown({ expiresAtMs, now, texts }: { expiresAtMs: number; now: number; texts: PageTexts }) {
  const left = expiresAtMs - now;
  return (
    <p className="field">
      <span className="label" id="countdown-label">
        {texts.timeLeft}
      </span>
      <span className="countdown" id="countdown" role="timer" aria-labelledby="countdown-label">
        {left > 0 ? formatLeft(left) : texts.expiredShort}
      </span>
    </p>
  );
}

/**
 * Its accessible name says "Copied" once the value is copied, and a live region announces it;
 * only for the value copied: the same button showing another value (the amount still due in
 * place of the full amount, after a partial payment) says "Copy" again.
 */
function CopyButton({ label, value, texts }: { label: string; value: string; texts: PageTexts }) {
  const [copiedText, setCopiedText] = useState<string | null>(null);
  const copied = copiedText === `${label}\n${value}`;
  const state = copied ? texts.copied : texts.copy;
  return (
    <>
      <button
        type="button"
        className="copy"
        aria-label={fill(texts.labelled, { label: state, value: label })}
        onClick={() => {
          void navigator.clipboard?.writeText(value).then(
            () => setCopiedText(`${label}\n${value}`),
            () => setCopiedText(null),
          );
        }}
      >
        {state}
      </button>
      <span className="sr-only" aria-live="polite">
        {copied ? fill(texts.labelled, { label: texts.copied, value: label }) : ""}
      </span>
    </>
  );
}

/**
 * A value to copy, on a line of its own; below it `unit` (an amount's coin), left out of the
 * copy as a wallet's amount field takes a bare number, and the Copy button. An amount never
 * breaks; an address or invoice (`long`) wraps anywhere. The value shows exactly what is
 * copied, as the gateway gave it (an amount with its decimal point, in every language): a
 * shopper who types it into a wallet instead types what they see, and a wallet reads
 * "0,0158" as another amount, or not at all.
 */
function CopyField({ id, label, value, unit, long = false, texts }: { id: string; label: string; value: string; unit?: string; long?: boolean; texts: PageTexts }) {
  return (
    <div className="field">
      <span className="label" id={`${id}-label`}>
        {label}
      </span>
      <code id={id} className={long ? "value long" : "value"} aria-labelledby={`${id}-label`}>
        {value}
      </code>
      <div className="copyrow">
        {unit ? (
          <span className="unit" id={`${id}-unit`}>
            {unit}
          </span>
        ) : null}
        <CopyButton label={label} value={value} texts={texts} />
      </div>
    </div>
  );
}

function ChooseCoin({ view, texts }: { view: PaymentPageView; texts: PageTexts }) {
  const navigation = useNavigation();
  const choosing = navigation.state !== "idle" ? navigation.formData?.get("symbol") : null;
  if (!view.coins) return <p className="error">{texts.errors.unavailable}</p>;
  if (view.coins.length === 0) return <p className="error">{texts.noCoins}</p>;
  return (
    <section className="card" aria-labelledby="choose-heading">
      <h2 id="choose-heading">{texts.chooseCoin}</h2>
      <p className="muted">{texts.chooseHelp}</p>
      <Form method="post">
        <ul className="coins">
          {view.coins.map((coin) => (
            <li key={coin.symbol}>
              <button type="submit" name="symbol" value={coin.symbol} disabled={Boolean(choosing)} aria-label={`${texts.payWith} ${coin.name} (${coin.blockchain})`}>
                <span>{coin.name}</span>
                <span className="muted">
                  {choosing === coin.symbol ? "…" : `${coin.symbol} · ${coin.blockchain}`}
                </span>
              </button>
            </li>
          ))}
        </ul>
      </Form>
    </section>
  );
}

/** What to send; shown only while `status` (the view's, or the countdown's once it reaches zero) asks for a payment. */
function PayWithCoin({ view, status, now, texts }: { view: PaymentPageView; status: ShopperStatus; now: number; texts: PageTexts }) {
  const pay = view.pay;
  if (!pay || !asksForPayment(status)) return null;
  const memoLabel = pay.memoKind ? texts.memoLabels[pay.memoKind] : null;
  if (pay.memoMissing) return <p className="error">{texts.memoMissing}</p>;
  // After a partial payment only the rest is asked for: the QR code (when there is one) asks for it too.
  const remaining = status === "partial" ? view.remaining : null;
  return (
    <section className="card" aria-labelledby="pay-heading">
      {/* Where focus goes once a coin is picked (the list and its buttons are gone). */}
      <h2 id="pay-heading" tabIndex={-1}>
        {texts.payWith} {pay.coin}
      </h2>
      {remaining ? <p className="muted">{texts.sendTheRest}</p> : null}
      {pay.qrSvg ? (
        <>
          <p className="muted">{texts.scanQr}</p>
          <figure className="qr" role="img" aria-label={texts.qrLabel} dangerouslySetInnerHTML={{ __html: pay.qrSvg }} />
          {/* On a phone the QR code cannot be scanned: the same request opens the wallet app. */}
          {pay.walletUri ? (
            <p>
              <a className="button" href={pay.walletUri}>
                {texts.openInWallet}
              </a>
            </p>
          ) : null}
        </>
      ) : null}
      {remaining ? (
        <CopyField id="remaining" label={texts.amountStillDue} value={remaining} unit={pay.coin} texts={texts} />
      ) : (
        <CopyField id="amount" label={texts.exactAmount} value={pay.amount} unit={pay.coin} texts={texts} />
      )}
      {pay.tagMemo && memoLabel ? (
        <div className="memo" role="alert" aria-labelledby="memo-label">
          <span className="label" id="memo-label">
            {memoLabel}
          </span>
          <strong className="value" id="tag-memo">
            {pay.tagMemo}
          </strong>
          <div className="copyrow">
            <CopyButton label={memoLabel} value={pay.tagMemo} texts={texts} />
          </div>
          <p>{fill(texts.memoWarning, { label: memoLabel })}</p>
        </div>
      ) : null}
      {pay.address ? (
        <>
          <CopyField id="address" label={texts.address} value={pay.address} long texts={texts} />
          {pay.network ? <p className="muted">{fill(texts.sendOnly, { coin: pay.coin, network: pay.network })}</p> : null}
        </>
      ) : null}
      {pay.invoice ? (
        <>
          <CopyField id="invoice" label={texts.lightningInvoice} value={pay.invoice} long texts={texts} />
          <p className="muted">{texts.lightningHelp}</p>
        </>
      ) : null}
      {view.expiresAtMs !== null ? <Countdown expiresAtMs={view.expiresAtMs} now={now} texts={texts} /> : null}
    </section>
  );
}

/**
 * "0.0079 ETH (€24.50; 50.0%)", "0,0079 ETH (24,50 €; 50,0 %)" in Spain: the coin when the
 * transactions are known, then the gateway's fiat value and percentage, all in the page's
 * notation (the server writes them so, as the browser's own number data may differ). A
 * semicolon parts the two, as a comma would run into a decimal comma ("R$ 24,50, 50,0%").
 */
function receivedText(view: PaymentPageView): string {
  const fiat = [view.received, view.percentageText].filter(Boolean).join("; ");
  const coin = view.receivedCryptoText && view.coin ? `${view.receivedCryptoText} ${view.coin}` : null;
  if (!coin) return fiat;
  return fiat ? `${coin} (${fiat})` : coin;
}

/**
 * Keeps focus on the page when a coin pick takes the coin list away: once the page moves on
 * to paying, on the payment's heading (the status's when nothing is to be sent); after a
 * refusal that took the pressed button away, on the error. A first load moves nothing.
 */
function useFocusAfterPick(stage: PaymentPageView["stage"], result: unknown) {
  const shownStage = useRef(stage);
  useEffect(() => {
    const before = shownStage.current;
    shownStage.current = stage;
    if (before !== "choose" || stage === "choose") return;
    (document.getElementById("pay-heading") ?? document.getElementById("status-heading"))?.focus();
  }, [stage]);
  useEffect(() => {
    if (!result) return;
    const active = document.activeElement;
    if (active === null || active === document.body) document.getElementById("pick-error")?.focus();
  }, [result]);
}

/**
 * Keeps focus on the page when what had it goes away as the payment moves on (the section with
 * the amount and its Copy buttons once the payment arrives, the countdown's end): on the
 * status's heading, so that a keyboard or screen-reader shopper is not sent back to the top of
 * the document (WCAG 2.4.3). Checked after each render, since a browser need not say when the
 * element with focus is removed.
 */
function useFocusKeptOnRemoval() {
  const lastFocused = useRef<Element | null>(null);
  useEffect(() => {
    // Focus given before the page's scripts ran (a shopper who tabbed to a Copy button while
    // they loaded) is where they are: no focus event will say so.
    const active = document.activeElement;
    lastFocused.current = active === null || active === document.body ? null : active;
    const onFocusIn = (event: FocusEvent) => {
      lastFocused.current = event.target instanceof Element ? event.target : null;
    };
    document.addEventListener("focusin", onFocusIn);
    return () => document.removeEventListener("focusin", onFocusIn);
  }, []);
  useEffect(() => {
    const last = lastFocused.current;
    if (last === null || last.isConnected) return;
    lastFocused.current = null;
    const active = document.activeElement;
    if (active === null || active === document.body) document.getElementById("status-heading")?.focus();
  });
}

/**
 * When the page's scripts do not run (turned off, or never arrived), it follows the payment by
 * reloading itself, as the return link's pages do, under the shopper's control (WCAG 2.2.1):
 * it says how often, "Check now" checks at once, and the checks can be stopped and started
 * again. A reload of a payment that has moved on takes the shopper on. With scripts, the
 * browser ignores all of it: the page follows the payment by itself.
 */
function ChecksWithoutScripts({ checks }: { checks: PageChecks }) {
  return (
    <noscript>
      {checks.refreshSeconds === null ? null : <meta httpEquiv="refresh" content={`${checks.refreshSeconds};url=${checks.here}`} />}
      <p>
        {checks.said}
        <br />
        <a className="secondary" href={checks.toggle}>
          {checks.toggleLabel}
        </a>
      </p>
      <p>
        <a className="button" href={checks.here}>
          {checks.checkNow}
        </a>
      </p>
    </noscript>
  );
}

export default function PaymentPage() {
  const loaded = useLoaderData<typeof loader>();
  if ("gone" in loaded) {
    const texts = pageTexts(loaded.language).shopGone;
    return (
      <ErrorCard language={loaded.language} heading={texts.heading}>
        <p>{texts.body}</p>
      </ErrorCard>
    );
  }
  return <PaymentPageShown view={loaded.view} texts={loaded.texts} withoutScripts={loaded.withoutScripts} />;
}

function PaymentPageShown({ view, texts, withoutScripts }: { view: PaymentPageView; texts: PageTexts; withoutScripts: PageChecks }) {
  const result = useActionData<typeof action>();
  // The countdown reaching zero ends the asking at once; polling goes on, for the order's end.
  const { now, rebase } = useServerNow(view.nowMs, view.expiresAtMs);
  const { redirecting } = useLiveStatus(view, rebase);
  useReloadWhenRestored();
  const status = statusAt(view.status, view.expiresAtMs, now);
  const statusText = redirecting ? texts.redirecting : texts.statuses[status];
  const moneyArrived = view.receivedCrypto !== null || status === "partial" || status === "partial_expired" || status === "confirming";
  /** Asked to pay an order the page has no means to pay with: only another way is offered. */
  const cannotPay = view.unpayable && asksForPayment(status);
  useFocusAfterPick(view.stage, result);
  useFocusKeptOnRemoval();

  return (
    <div className="pp" lang={languageTag(view.language)}>
      <style dangerouslySetInnerHTML={{ __html: PAYMENT_PAGE_CSS }} />
      <main>
        <header className="card">
          <h1>{texts.pageTitle}</h1>
          <p className="muted">
            {texts.payingAt} {view.shopName}
          </p>
          {/* The payment's whole amount, whatever has arrived of it: what is still due, after a partial payment, is asked for below. */}
          <p className="muted" style={{ margin: "8px 0 0" }}>
            {texts.paymentAmount}
          </p>
          <p className="big">{view.amount}</p>
        </header>

        {result && "error" in result ? (
          <p className="error" role="alert" id="pick-error" tabIndex={-1}>
            {result.error}
            {/* The gateway's own words, as text. */}
            {"reason" in result && typeof result.reason === "string" ? (
              <>
                <br />
                {result.reason}
              </>
            ) : null}
          </p>
        ) : null}

        <section className="card" aria-labelledby="status-heading">
          <h2 id="status-heading" tabIndex={-1}>
            {texts.status}
          </h2>
          <p className="status" role="status" aria-live="polite" id="payment-status">
            {cannotPay ? texts.noPaymentDetails : status === "partial" && view.restUnknown && !redirecting ? texts.restUnknown : statusText}
          </p>
          {view.stage !== "choose" ? <ChecksWithoutScripts checks={withoutScripts} /> : null}
          {(status === "partial" || status === "partial_expired") && (view.receivedCrypto || view.received) ? (
            <p className="muted">
              {fill(texts.labelled, { label: texts.received, value: receivedText(view) })}
            </p>
          ) : null}
          {status === "partial_expired" ? <p>{texts.partialExpiredHelp}</p> : null}
          {status === "expired" && !redirecting ? <p>{texts.expiredHelp}</p> : null}
          {status === "review" ? <p>{texts.reviewHelp}</p> : null}
          {status === "confirming" ? <p className="muted">{texts.confirmingReturn}</p> : null}
          {waitsOnOthers(status) ? (
            <a className="button" href={view.standbyUrl}>
              {texts.backToShop}
            </a>
          ) : null}
        </section>

        {view.stage === "choose" ? <ChooseCoin view={view} texts={texts} /> : null}
        {view.stage === "pay" ? <PayWithCoin view={view} status={status} now={now} texts={texts} /> : null}
        {view.stage === "gateway" && view.gatewayUrl && asksForPayment(status) ? (
          <section className="card">
            <a className="button" href={view.gatewayUrl}>
              {texts.continueOnGateway}
            </a>
          </section>
        ) : null}
        {cannotPay ? (
          <section className="card">
            <a className="button" href={view.anotherWayUrl}>
              {texts.payAnotherWay}
            </a>
          </section>
        ) : null}

        {/* Once money has arrived, paying another way would leave it at the gateway; and while
            the gateway reports a status the app does not know, money may have arrived. */}
        {!moneyArrived && status !== "review" && !cannotPay ? (
          <footer>
            <a className="secondary" href={view.anotherWayUrl}>
              {texts.payAnotherWay}
            </a>
          </footer>
        ) : null}
      </main>
    </div>
  );
}

/**
 * Whether the shopper has nothing more to do here: the money is on its way to confirmation, or
 * what arrived is left for the shop (a partial payment whose time ran out, a status the page
 * cannot show). The page offers the way back to the shop: the standby return tells Shopify the
 * payment is pending and sends the shopper to the order's page.
 */
function waitsOnOthers(status: ShopperStatus): boolean {
  return status === "confirming" || status === "partial_expired" || status === "review";
}

/**
 * Whether the page's own request to the server did not get through (the shopper's connection
 * dropped): the browser's fetch failing, in the words of Chromium, Firefox and Safari.
 */
function isConnectionFailure(error: unknown): boolean {
  return error instanceof TypeError && /failed to fetch|networkerror|load failed|network connection was lost/i.test(error.message);
}

/** How often the page tries again to reach the server after its connection dropped. */
const RECONNECT_EVERY_MS = 5_000;

/**
 * The page lost its connection (a coin pick or a reload of its data did not get through): it
 * says so, tries again by itself and on demand, and comes back as it was once the connection is.
 */
function ConnectionLost({ language }: { language: PageLanguage }) {
  const { state, revalidate } = useRevalidator();
  useEffect(() => {
    const timer = window.setInterval(() => {
      if (state === "idle") revalidate();
    }, RECONNECT_EVERY_MS);
    return () => window.clearInterval(timer);
  }, [state, revalidate]);
  const texts = pageTexts(language).connectionLost;
  return (
    <ErrorCard language={language} heading={texts.heading}>
      <p role="status">{texts.body}</p>
      <button type="button" className="button" onClick={() => revalidate()}>
        {texts.tryAgain}
      </button>
    </ErrorCard>
  );
}

/** The page in place of the payment's: one card under a heading, in `language`. */
function ErrorCard({ language, heading, children }: { language: PageLanguage; heading: string; children: React.ReactNode }) {
  return (
    <div className="pp" lang={languageTag(language)}>
      <style dangerouslySetInnerHTML={{ __html: PAYMENT_PAGE_CSS }} />
      <main>
        <section className="card" aria-labelledby="error-heading">
          <h1 id="error-heading">{heading}</h1>
          {children}
        </section>
      </main>
    </div>
  );
}

/** A link that leads to no payment, a page that failed, or a connection that dropped: what to do, and no detail of why. */
export function ErrorBoundary() {
  const error = useRouteError();
  // The browser's language, as the root read it: the page's own data may be what did not arrive.
  const browserLanguage = useRouteLoaderData<DocumentLanguageContext>("root")?.acceptedLanguage;
  // The page's own data, when it was shown before the request that failed: the language it speaks.
  const shown = useRouteLoaderData<typeof loader>("routes/pay.$paymentId");
  const shownLanguage = shown && "view" in shown ? shown.view.language : undefined;
  if (isConnectionFailure(error)) return <ConnectionLost language={shownLanguage ?? pageLanguage(browserLanguage)} />;
  const { language, texts } = errorTexts(error, browserLanguage);
  return (
    <ErrorCard language={language} heading={texts.heading}>
      <p>{texts.body}</p>
    </ErrorCard>
  );
}
