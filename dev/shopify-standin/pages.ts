// The stand-in's HTML pages: the home page, the checkout simulator, the app's refusal,
// the order status page (what the buyer and the merchant would see), and the page a
// buyer lands on after abandoning the payment.

import { BILLING_FIELDS, CURRENCIES, LOCALES, type CheckoutInput } from "./checkout-input";
import { html, page, type SafeHtml } from "./html";
import type { AppDelivery, FollowUpSessionRecord, PaymentSessionRecord } from "./store";

const FIELD_LABELS: Record<(typeof BILLING_FIELDS)[number], string> = {
  given_name: "First name",
  family_name: "Last name",
  company: "Company (optional)",
  line1: "Address",
  line2: "Apartment, suite (optional)",
  city: "City",
  postal_code: "Postal code",
  province: "Province / state",
  province_code: "Province code",
  country_code: "Country code (ISO, 2 letters)",
  phone_number: "Address phone",
};

export function homePage(sessions: PaymentSessionRecord[]): string {
  const recent = sessions.slice(-10).reverse();
  return page(
    "Home",
    html`<h1>Demo shop</h1>
<div class="card">
  <p>This local server plays Shopify's part for the payments app: it sends payment sessions to the app, answers the app's Payments Apps GraphQL calls and shows the resulting orders.</p>
  <p><a class="button" href="/checkout">Open the checkout simulator</a></p>
</div>
${recent.length
  ? html`<h2>Recent orders</h2><div class="card"><ul class="plain">${recent.map(
      (s) => html`<li><a href="/orders/${s.id}">${s.request.amount} ${s.request.currency}</a> · ${statusBadge(s)} <span class="muted">${s.createdAt}</span></li>`,
    )}</ul></div>`
  : ""}
<p class="muted"><a href="/_standin/sessions">Inspection data (JSON)</a></p>`,
  );
}

/** `after` names an earlier attempt of the same checkout: the new session joins its group. */
/**
 * Real Shopify offers the app's payment method only while the app's last paymentsAppConfigure
 * said ready: the simulator sends a session either way, and says when Shopify would not.
 */
function readinessNote(configuration: { ready: boolean } | null | undefined): SafeHtml | "" {
  if (configuration === undefined || configuration?.ready) return "";
  const why = configuration === null ? "The app has not configured the payments app yet" : "The app last told Shopify it is not ready (paymentsAppConfigure ready: false)";
  return html`<div class="card"><p><strong>Shopify would not offer this payment method now.</strong> ${why}: with only the gateway sandbox connected, turn on Test mode in the app's Settings. The simulator sends the session anyway.</p></div>`;
}

export function checkoutPage(input: CheckoutInput, errors: string[] = [], after?: string, configuration?: { ready: boolean } | null): string {
  const billing = input.customer.billing_address;
  return page(
    "Checkout",
    html`<h1>Checkout</h1>
${readinessNote(configuration)}
${errors.length ? html`<div class="card error"><h2>Please correct the order</h2><ul>${errors.map((e) => html`<li>${e}</li>`)}</ul></div>` : ""}
<form method="post" action="/checkout">
${after ? html`<input type="hidden" name="after" value="${after}"><p class="muted">Trying again after payment session ${after}.</p>` : ""}
<div class="card">
  <h2>Order</h2>
  <div class="row">
    <label>Amount<input name="amount" inputmode="decimal" required value="${input.amount}"></label>
    <label>Currency<select name="currency">${Object.keys(CURRENCIES).map(
      (c) => html`<option${c === input.currency ? html` selected` : ""}>${c}</option>`,
    )}</select></label>
  </div>
  <div class="row">
    <label>Locale<select name="locale">${LOCALES.map((l) => html`<option${l === input.locale ? html` selected` : ""}>${l}</option>`)}</select></label>
    <label>Payment kind<select name="kind">
      <option value="sale"${input.kind === "sale" ? html` selected` : ""}>sale</option>
      <option value="authorization"${input.kind === "authorization" ? html` selected` : ""}>authorization</option>
    </select></label>
  </div>
  <label><input type="checkbox" name="test"${input.test ? html` checked` : ""}>Test mode (no real money moves)</label>
</div>
<div class="card">
  <h2>Customer</h2>
  <div class="row">
    <label>E-mail<input name="email" type="email" value="${input.customer.email ?? ""}"></label>
    <label>Phone<input name="phone_number" type="tel" value="${input.customer.phone_number ?? ""}"></label>
  </div>
  <h2>Billing and shipping address</h2>
  <div class="row">${BILLING_FIELDS.map(
    (field) => html`<label>${FIELD_LABELS[field]}<input name="billing_${field}" value="${billing[field] ?? ""}"></label>`,
  )}</div>
</div>
<button type="submit">Pay now</button>
</form>`,
  );
}

export function deliveryFailedPage(session: PaymentSessionRecord, delivery: AppDelivery): string {
  return page(
    "Payment could not start",
    html`<h1>The payment could not start</h1>
<div class="card error">
  <h2>${delivery.outcome === "unreachable" ? "The payments app could not be reached" : "The payments app refused the payment session"}</h2>
  <p>${delivery.detail}</p>
  <dl>
    <dt>App URL</dt><dd>${delivery.url}</dd>
    <dt>HTTP status</dt><dd>${delivery.status ?? "no answer"}</dd>
    <dt>Times sent</dt><dd>${String(session.deliveries.length)}</dd>
    <dt>Request id</dt><dd>${delivery.requestId}</dd>
  </dl>
  ${delivery.body ? html`<h2>The app's answer</h2><pre>${delivery.body}</pre>` : ""}
</div>
<div class="actions">
  <form method="post" action="/checkout/sessions/${session.id}/retry" class="inline"><button type="submit">Send again (same session id)</button></form>
  <a class="button secondary" href="/checkout?after=${session.id}">Back to checkout</a>
</div>
${requestDetails(session)}`,
    { status: 502 },
  );
}

export function orderPage(session: PaymentSessionRecord, followUps: FollowUpSessionRecord[], options: { canRefund: boolean; canCaptureVoid: boolean }): string {
  const state = session.state;
  const kind = session.request.kind;
  const open = (f: FollowUpSessionRecord) => f.state.code === "OPEN";
  const settled = state.code === "RESOLVED" || state.code === "REJECTED";
  const refreshSeconds = !settled ? 3 : followUps.some(open) ? 3 : undefined;

  const captured = followUps.some((f) => f.type === "capture" && f.state.code === "RESOLVED");
  const voided = followUps.some((f) => f.type === "void" && f.state.code === "RESOLVED");
  const paidMoney = state.code === "RESOLVED" && (kind === "sale" || captured);

  const buyerView: SafeHtml = (() => {
    switch (state.code) {
      case "OPEN":
        return html`<p>${statusBadge(session)}</p><p>Waiting for the payments app to confirm the payment. This page refreshes by itself.</p>`;
      case "PENDING":
        return html`<p>${statusBadge(session)}</p><p>Your order is confirmed; the payment is being processed (${describePending(state.reason)}). You will receive an e-mail when it completes.</p><p class="muted">Pending until ${state.pendingExpiresAt}</p>`;
      case "RESOLVED":
        return html`<p>${statusBadge(session)}</p><p>Thank you! Your order is confirmed.</p>`;
      case "REJECTED":
        return html`<p>${statusBadge(session)}</p><p>Your payment could not be processed. Please try again or choose another payment method.</p><p><a class="button" href="/checkout?after=${session.id}">Back to checkout</a></p>`;
    }
  })();

  return page(
    `Order ${session.id}`,
    html`<h1>Order for ${session.request.amount} ${session.request.currency}</h1>
<div class="card"><h2>What the buyer sees</h2>${buyerView}</div>
<div class="card">
  <h2>What the merchant sees</h2>
  <dl>
    <dt>Payment session</dt><dd>${session.id}</dd>
    <dt>State</dt><dd>${state.code}${kind === "authorization" ? ` (authorization${captured ? ", captured" : ""}${voided ? ", voided" : ""})` : ""}</dd>
    ${state.code === "PENDING" ? html`<dt>Pending reason</dt><dd>${state.reason}</dd><dt>Expires</dt><dd>${state.pendingExpiresAt}</dd>` : ""}
    ${state.code === "REJECTED" ? html`<dt>Reason</dt><dd>${state.reason}</dd><dt>Message</dt><dd>${state.merchantMessage ?? "none"}</dd>` : ""}
    <dt>Test</dt><dd>${session.request.test ? "yes" : "no"}</dd>
  </dl>
</div>
${followUps.length
  ? html`<div class="card"><h2>Refunds, captures and voids</h2><ul class="plain">${followUps.map((f) => followUpLine(f))}</ul></div>`
  : ""}
${paidMoney && options.canRefund
  ? html`<div class="card"><h2>Refund</h2><form method="post" action="/orders/${session.id}/refunds">
  <label>Amount to refund (${session.request.currency})<input name="amount" inputmode="decimal" value="${session.request.amount}"></label>
  <button type="submit">Refund</button></form></div>`
  : ""}
${state.code === "RESOLVED" && kind === "authorization" && !captured && !voided && options.canCaptureVoid
  ? html`<div class="card"><h2>Authorized payment</h2><div class="actions">
  <form method="post" action="/orders/${session.id}/captures" class="inline"><button type="submit">Capture</button></form>
  <form method="post" action="/orders/${session.id}/voids" class="inline"><button type="submit" class="secondary">Void</button></form></div></div>`
  : ""}
${requestDetails(session)}`,
    refreshSeconds ? { refreshSeconds } : {},
  );
}

export function cancelledPage(session: PaymentSessionRecord | undefined, sessionId: string): string {
  return page(
    "Payment cancelled",
    html`<h1>You left the payment page</h1>
<div class="card">
  <p>The payment was not completed, and nothing was charged. You can go back to the checkout and pay again.</p>
  <p class="muted">Payment session ${sessionId}${session ? html` · current state ${session.state.code}` : " (unknown to this shop)"}</p>
  <div class="actions"><a class="button" href="/checkout${session ? `?after=${session.id}` : ""}">Back to checkout</a>${session ? html`<a class="button secondary" href="/orders/${session.id}">Order status</a>` : ""}</div>
</div>`,
  );
}

export function messagePage(title: string, message: string, status: number): { status: number; body: string } {
  return { status, body: page(title, html`<h1>${title}</h1><div class="card"><p>${message}</p><p><a href="/">Home</a></p></div>`) };
}

export function followUpFailedPage(followUp: FollowUpSessionRecord, delivery: AppDelivery): string {
  return page(
    `The ${followUp.type} could not start`,
    html`<h1>The app refused the ${followUp.type} session</h1>
<div class="card error"><h2>${delivery.detail}</h2>
<dl><dt>App URL</dt><dd>${delivery.url}</dd><dt>HTTP status</dt><dd>${delivery.status ?? "no answer"}</dd></dl>
${delivery.body ? html`<pre>${delivery.body}</pre>` : ""}</div>
<p><a class="button" href="/orders/${followUp.paymentId}">Back to the order</a></p>`,
  );
}

function statusBadge(session: PaymentSessionRecord): SafeHtml {
  switch (session.state.code) {
    case "OPEN":
      return html`<span class="status wait">Waiting for payment</span>`;
    case "PENDING":
      return html`<span class="status wait">Payment pending</span>`;
    case "RESOLVED":
      return session.request.kind === "authorization" ? html`<span class="status ok">Authorized</span>` : html`<span class="status ok">Paid</span>`;
    case "REJECTED":
      return session.state.expired ? html`<span class="status bad">Expired</span>` : html`<span class="status bad">Payment failed</span>`;
  }
}

function followUpLine(f: FollowUpSessionRecord): SafeHtml {
  const amount = typeof f.request.amount === "string" ? ` ${f.request.amount} ${String(f.request.currency ?? "")}` : "";
  const last = f.deliveries.at(-1);
  const state =
    f.state.code === "OPEN"
      ? html`<span class="status wait">processing</span>`
      : f.state.code === "RESOLVED"
        ? html`<span class="status ok">done</span>`
        : html`<span class="status bad">rejected</span> ${f.state.reason}${f.state.merchantMessage ? html`: ${f.state.merchantMessage}` : ""}`;
  return html`<li>${f.type}${amount} · ${state}${last && last.outcome !== "accepted" ? html` <span class="muted">(app: ${last.detail})</span>` : ""}</li>`;
}

function describePending(reason: string): string {
  switch (reason) {
    case "BUYER_ACTION_REQUIRED":
      return "waiting for the buyer";
    case "NETWORK_ACTION_REQUIRED":
      return "waiting for the payment network";
    case "MERCHANT_ACTION_REQUIRED":
      return "waiting for the merchant";
    case "PARTNER_ACTION_REQUIRED":
      return "waiting for the payment provider";
    default:
      return reason;
  }
}

function requestDetails(session: PaymentSessionRecord): SafeHtml {
  return html`<details class="card"><summary>What Shopify sent to the app</summary>
<pre>${JSON.stringify(session.request, null, 2)}</pre>
${session.deliveries.map((d) => html`<p class="muted">${d.at} · ${d.url} · HTTP ${d.status ?? "none"} · ${d.detail}</p>`)}
</details>`;
}
