// The actions Shopify takes towards the app: open a payment session from a checkout and
// send it (again, with the same id, when asked), and open refund, capture and void
// sessions for an order. Pages, the inspection API and tests all go through here.

import Decimal from "decimal.js";
import { CURRENCIES, checkoutInputSchema, DEMO_CHECKOUT, formatAmount, type CheckoutInput } from "./checkout-input";
import { buildFollowUpSession, buildPaymentSession, deliverToApp } from "./shopify-requests";
import type { AppDelivery, FollowUpSessionRecord, FollowUpType, PaymentSessionRecord, StandinStore } from "./store";

export interface SimulatorConfig {
  shopDomain: string;
  appUrl: string;
  paymentSessionPath: string;
  refundSessionPath: string | null;
  captureSessionPath: string | null;
  voidSessionPath: string | null;
  now: () => Date;
  /** Where shoppers reach the stand-in (the cancel URL it hands out). */
  origin: () => string;
}

export type CheckoutOverrides = Partial<Omit<CheckoutInput, "customer">> & {
  customer?: Partial<Omit<CheckoutInput["customer"], "billing_address">> & { billing_address?: CheckoutInput["customer"]["billing_address"] | Record<string, never> };
};

/** How many times the checkout sends a payment session again after a failed answer. */
export const PAYMENT_SESSION_RETRIES = 3;
/** The longest wait between two of those attempts: the buyer waits at checkout meanwhile. */
const RETRY_WAIT_CAP_MS = 5_000;

/** An answer Shopify tries again: no answer, or not a 2xx (a 2xx it cannot use is refused for good). */
function answeredFailure(delivery: AppDelivery): boolean {
  return delivery.outcome === "unreachable" || (delivery.outcome === "refused" && delivery.status !== null && (delivery.status < 200 || delivery.status >= 300));
}

export class ShopifySimulator {
  constructor(
    private readonly store: StandinStore,
    private readonly config: SimulatorConfig,
  ) {}

  /** The demo checkout with the given changes, validated like the form. */
  checkoutInput(overrides: CheckoutOverrides = {}): CheckoutInput {
    const merged = {
      ...DEMO_CHECKOUT,
      ...overrides,
      customer: {
        ...DEMO_CHECKOUT.customer,
        ...overrides.customer,
        billing_address: overrides.customer?.billing_address ?? DEMO_CHECKOUT.customer.billing_address,
      },
    };
    return checkoutInputSchema.parse(merged);
  }

  /** `group` joins the session to an earlier attempt of the same checkout. */
  createPaymentSession(input: CheckoutInput, group?: string): PaymentSessionRecord {
    const session = buildPaymentSession(input, {
      shopDomain: this.config.shopDomain,
      origin: this.config.origin(),
      now: this.config.now(),
      ...(group !== undefined ? { group } : {}),
    });
    this.store.addPayment(session);
    return session;
  }

  /**
   * Sends the session as Shopify's checkout does: an answer that is not a 2xx, or none, is sent
   * again (same session) up to PAYMENT_SESSION_RETRIES more times, after the wait the app asked
   * for (Retry-After, at most RETRY_WAIT_CAP_MS) or 0.5, 1, 2 s. Every attempt is recorded.
   */
  async deliverPaymentWithRetries(session: PaymentSessionRecord, sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))): Promise<AppDelivery> {
    let delivery = await this.deliverPayment(session);
    for (let retry = 0; retry < PAYMENT_SESSION_RETRIES && answeredFailure(delivery); retry++) {
      await sleep(Math.min(delivery.retryAfterSeconds !== undefined ? delivery.retryAfterSeconds * 1000 : 500 * 2 ** retry, RETRY_WAIT_CAP_MS));
      delivery = await this.deliverPayment(session);
    }
    return delivery;
  }

  /** Sends the session once. */
  async deliverPayment(session: PaymentSessionRecord): Promise<AppDelivery> {
    const delivery = await deliverToApp(this.appUrl(this.config.paymentSessionPath), session.request, {
      shopDomain: session.shopDomain,
      expect: "redirect",
      now: this.config.now,
    });
    session.deliveries.push(delivery);
    return delivery;
  }

  followUpPath(type: FollowUpType): string | null {
    return { refund: this.config.refundSessionPath, capture: this.config.captureSessionPath, void: this.config.voidSessionPath }[type];
  }

  /** Opens a refund, capture or void session; a string explains why it cannot be opened. */
  createFollowUp(type: FollowUpType, payment: PaymentSessionRecord, amount?: string): FollowUpSessionRecord | string {
    if (payment.state.code !== "RESOLVED") return `Only a paid order can have a ${type}; this one is ${payment.state.code.toLowerCase()}.`;
    const siblings = this.store.followUpsOf(payment.id);
    let followUpAmount: string | undefined;
    if (type !== "refund") {
      if (payment.request.kind !== "authorization") return `Only an authorization can be ${type === "capture" ? "captured" : "voided"}.`;
      if (siblings.some((f) => (f.type === "capture" || f.type === "void") && f.state.code !== "REJECTED")) {
        return "This authorization already has a capture or a void.";
      }
      // A capture may take less than was authorized (a partial capture), never more.
      if (type === "capture" && amount !== undefined) {
        const problem = this.amountProblem(payment, amount, new Decimal(payment.request.amount), "capture");
        if (problem) return problem;
        followUpAmount = formatAmount(amount, payment.request.currency);
      }
    } else {
      if (payment.request.kind === "authorization" && !siblings.some((f) => f.type === "capture" && f.state.code === "RESOLVED")) {
        return "An authorization must be captured before it can be refunded.";
      }
      const requested = amount ?? payment.request.amount;
      const problem = this.refundAmountProblem(payment, siblings, requested);
      if (problem) return problem;
      followUpAmount = formatAmount(requested, payment.request.currency);
    }
    const followUp = buildFollowUpSession(type, payment, { ...(followUpAmount !== undefined ? { amount: followUpAmount } : {}), now: this.config.now() });
    this.store.addFollowUp(followUp);
    return followUp;
  }

  async deliverFollowUp(followUp: FollowUpSessionRecord): Promise<AppDelivery> {
    const path = this.followUpPath(followUp.type);
    if (path === null) throw new Error(`No ${followUp.type} session path is configured`);
    const delivery = await deliverToApp(this.appUrl(path), followUp.request, {
      shopDomain: followUp.shopDomain,
      expect: "created",
      now: this.config.now,
    });
    followUp.deliveries.push(delivery);
    return delivery;
  }

  private refundAmountProblem(payment: PaymentSessionRecord, siblings: FollowUpSessionRecord[], requested: string): string | null {
    const committed = siblings
      .filter((f) => f.type === "refund" && f.state.code !== "REJECTED" && typeof f.request.amount === "string")
      .reduce((sum, f) => sum.plus(new Decimal(f.request.amount as string)), new Decimal(0));
    return this.amountProblem(payment, requested, new Decimal(payment.request.amount).minus(committed), "refund");
  }

  /** What is wrong with a refund's or capture's amount: its form, or more than `available`. */
  private amountProblem(payment: PaymentSessionRecord, requested: string, available: Decimal, what: "refund" | "capture"): string | null {
    const minor = CURRENCIES[payment.request.currency] ?? 2;
    if (!/^\d{1,12}(\.\d{1,4})?$/.test(requested)) return `The ${what} amount must be a decimal number with a dot, like 10.00.`;
    const amount = new Decimal(requested);
    if (amount.lte(0)) return `The ${what} amount must be greater than zero.`;
    if (amount.decimalPlaces() > minor) return `${payment.request.currency} amounts have at most ${minor} decimals.`;
    if (amount.gt(available)) return `At most ${available.toFixed(Math.max(minor, 2))} ${payment.request.currency} can still be ${what === "refund" ? "refunded" : "captured"}.`;
    return null;
  }

  private appUrl(path: string): string {
    return `${this.config.appUrl.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
  }
}
