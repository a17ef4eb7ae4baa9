// The stand-in's in-memory Shopify: payment, refund, capture and void sessions with
// Shopify's state rules, the app's configuration, and the log of every GraphQL request.
// Resolve and reject are final; repeating the same call answers the same; a conflicting
// call is a user error; pending can be followed by resolve or reject until it expires.

import { randomBytes } from "node:crypto";

export type PendingReason = "BUYER_ACTION_REQUIRED" | "MERCHANT_ACTION_REQUIRED" | "PARTNER_ACTION_REQUIRED" | "NETWORK_ACTION_REQUIRED";

export type PaymentSessionState =
  | { code: "OPEN" }
  | { code: "PENDING"; at: string; reason: PendingReason; pendingExpiresAt: string }
  | { code: "RESOLVED"; at: string }
  | { code: "REJECTED"; at: string; reason: string; merchantMessage: string | null; expired: boolean };

export type FollowUpSessionState =
  | { code: "OPEN" }
  | { code: "RESOLVED"; at: string }
  | { code: "REJECTED"; at: string; reason: string; merchantMessage: string | null };

export interface CustomerAddress {
  given_name?: string;
  family_name?: string;
  line1?: string;
  line2?: string;
  city?: string;
  postal_code?: string;
  province?: string;
  province_code?: string;
  country_code?: string;
  phone_number?: string;
  company?: string;
}

export interface PaymentSessionRequestBody {
  id: string;
  gid: string;
  group: string;
  session_id: string;
  amount: string;
  currency: string;
  test: boolean;
  merchant_locale: string;
  payment_method: { type: "offsite"; data: { cancel_url: string } };
  proposed_at: string;
  kind: "sale" | "authorization";
  customer: {
    email?: string;
    phone_number?: string;
    locale?: string;
    billing_address?: CustomerAddress;
    shipping_address?: CustomerAddress;
  };
}

/** One POST the stand-in made to the app, and what came back. */
export interface AppDelivery {
  at: string;
  url: string;
  requestId: string;
  status: number | null;
  /** The app's answer body, cut to 8 KiB. */
  body: string;
  outcome: "accepted" | "refused" | "unreachable";
  detail: string;
  redirectUrl: string | null;
  /** The wait the app asked for (Retry-After in seconds), when it asked for one. */
  retryAfterSeconds?: number;
}

export interface PaymentSessionRecord {
  type: "payment";
  id: string;
  gid: string;
  group: string;
  shopDomain: string;
  createdAt: string;
  request: PaymentSessionRequestBody;
  state: PaymentSessionState;
  deliveries: AppDelivery[];
}

export type FollowUpType = "refund" | "capture" | "void";

export interface FollowUpSessionRecord {
  type: FollowUpType;
  id: string;
  gid: string;
  paymentId: string;
  shopDomain: string;
  createdAt: string;
  request: Record<string, unknown>;
  state: FollowUpSessionState;
  deliveries: AppDelivery[];
}

export type SessionRecord = PaymentSessionRecord | FollowUpSessionRecord;

export interface StandinUserError {
  field: string[] | null;
  message: string;
  code?: string;
}

export interface OperationRecord {
  seq: number;
  at: string;
  shopDomain: string;
  apiVersion: string;
  operationName: string | null;
  query: string | null;
  variables: unknown;
  /** The fault the stand-in injected instead of answering, if any. */
  fault: string | null;
  /** Null when the request never reached validation (fault, bad token, malformed body). */
  validation: { valid: boolean; errors: unknown[] } | null;
  status: number;
  answer: unknown;
  /** Session gids named in the variables, to list a session's operations. */
  sessionIds: string[];
}

export interface PaymentsAppConfiguration {
  externalHandle: string | null;
  ready: boolean;
  at: string;
}

export interface TransitionResult<S> {
  session: S | null;
  userErrors: StandinUserError[];
}

const GID_PREFIX: Record<"payment" | FollowUpType, string> = {
  payment: "gid://shopify/PaymentSession/",
  refund: "gid://shopify/RefundSession/",
  capture: "gid://shopify/CaptureSession/",
  void: "gid://shopify/VoidSession/",
};

const PENDING_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;

/** A Shopify-looking opaque identifier (24 alphanumerics). */
export function shopifyStyleId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(randomBytes(24), (b) => alphabet[b % alphabet.length]).join("");
}

export function gidFor(type: "payment" | FollowUpType, id: string): string {
  return `${GID_PREFIX[type]}${id}`;
}

export class StandinStore {
  private readonly payments = new Map<string, PaymentSessionRecord>();
  private readonly followUps = new Map<string, FollowUpSessionRecord>();
  private readonly log: OperationRecord[] = [];
  private configurationHistory: PaymentsAppConfiguration[] = [];

  constructor(private readonly now: () => Date) {}

  addPayment(record: PaymentSessionRecord): void {
    this.payments.set(record.gid, record);
  }

  addFollowUp(record: FollowUpSessionRecord): void {
    this.followUps.set(record.gid, record);
  }

  /** By id or gid, of any type. */
  find(idOrGid: string): SessionRecord | undefined {
    const direct = this.payments.get(idOrGid) ?? this.followUps.get(idOrGid);
    if (direct) return this.refreshed(direct);
    for (const record of [...this.payments.values(), ...this.followUps.values()]) {
      if (record.id === idOrGid) return this.refreshed(record);
    }
    return undefined;
  }

  findPayment(idOrGid: string): PaymentSessionRecord | undefined {
    const found = this.find(idOrGid);
    return found?.type === "payment" ? found : undefined;
  }

  paymentSessions(): PaymentSessionRecord[] {
    return [...this.payments.values()].map((p) => this.refreshed(p));
  }

  followUpSessions(type?: FollowUpType): FollowUpSessionRecord[] {
    return [...this.followUps.values()].filter((f) => type === undefined || f.type === type);
  }

  followUpsOf(paymentId: string): FollowUpSessionRecord[] {
    return this.followUpSessions().filter((f) => f.paymentId === paymentId);
  }

  record(operation: Omit<OperationRecord, "seq">): OperationRecord {
    const full = { seq: this.log.length + 1, ...operation };
    this.log.push(full);
    return full;
  }

  operations(): OperationRecord[] {
    return [...this.log];
  }

  configuration(): PaymentsAppConfiguration | null {
    return this.configurationHistory.at(-1) ?? null;
  }

  configurationChanges(): PaymentsAppConfiguration[] {
    return [...this.configurationHistory];
  }

  reset(): void {
    this.payments.clear();
    this.followUps.clear();
    this.log.length = 0;
    this.configurationHistory = [];
  }

  // --- Payment sessions -------------------------------------------------------------

  resolvePayment(gid: string): TransitionResult<PaymentSessionRecord> {
    const session = this.findPaymentByGid(gid);
    if (!session) return notFound("Payment session");
    switch (session.state.code) {
      case "RESOLVED":
        return { session, userErrors: [] };
      case "REJECTED":
        return conflict(session, session.state.expired ? "The pending payment session expired and was rejected; it cannot be resolved." : "The payment session was already rejected; it cannot be resolved.");
      case "OPEN":
      case "PENDING": {
        const sibling = this.paymentSessions().find((p) => p.group === session.group && p.gid !== session.gid && p.state.code === "RESOLVED");
        if (sibling) return conflict(session, "Another payment session of this checkout was already resolved.");
        session.state = { code: "RESOLVED", at: this.now().toISOString() };
        return { session, userErrors: [] };
      }
    }
  }

  rejectPayment(gid: string, reason: { code: string; merchantMessage?: string | null | undefined }): TransitionResult<PaymentSessionRecord> {
    const session = this.findPaymentByGid(gid);
    if (!session) return notFound("Payment session");
    switch (session.state.code) {
      case "REJECTED":
        return { session, userErrors: [] };
      case "RESOLVED":
        return conflict(session, "The payment session was already resolved; it cannot be rejected.");
      case "OPEN":
      case "PENDING":
        session.state = {
          code: "REJECTED",
          at: this.now().toISOString(),
          reason: reason.code,
          merchantMessage: reason.merchantMessage ?? null,
          expired: false,
        };
        return { session, userErrors: [] };
    }
  }

  pendPayment(gid: string, pendingExpiresAt: string, reason: PendingReason): TransitionResult<PaymentSessionRecord> {
    const session = this.findPaymentByGid(gid);
    if (!session) return notFound("Payment session", "NOT_FOUND");
    if (session.state.code === "RESOLVED" || session.state.code === "REJECTED") {
      return conflict(session, `The payment session is already ${session.state.code.toLowerCase()}; it cannot be marked pending.`, "PENDING_INVALID_STATE");
    }
    const now = this.now().getTime();
    const expires = Date.parse(pendingExpiresAt);
    if (expires <= now) {
      return conflict(session, "pendingExpiresAt is in the past.", "EXPIRED_PENDING_EXPIRES_AT", ["pendingExpiresAt"]);
    }
    if (expires > now + PENDING_WINDOW_MS) {
      return conflict(session, "pendingExpiresAt must be within 3 days.", "OUT_OF_RANGE_PENDING_EXPIRES_AT", ["pendingExpiresAt"]);
    }
    session.state = { code: "PENDING", at: new Date(now).toISOString(), reason, pendingExpiresAt: new Date(expires).toISOString() };
    return { session, userErrors: [] };
  }

  // --- Refund, capture and void sessions ---------------------------------------------

  resolveFollowUp(type: FollowUpType, gid: string): TransitionResult<FollowUpSessionRecord> {
    const session = this.followUps.get(gid);
    const prefix = type.toUpperCase();
    if (!session || session.type !== type) return notFound(`${capitalise(type)} session`, `${prefix}_SESSION_NOT_FOUND`);
    if (session.state.code === "REJECTED") {
      return conflict(session, `The ${type} session was already rejected; it cannot be resolved.`, `${prefix}_SESSION_INVALID_STATE`);
    }
    if (session.state.code === "OPEN") session.state = { code: "RESOLVED", at: this.now().toISOString() };
    return { session, userErrors: [] };
  }

  rejectFollowUp(type: FollowUpType, gid: string, reason: { code: string; merchantMessage?: string | null | undefined }): TransitionResult<FollowUpSessionRecord> {
    const session = this.followUps.get(gid);
    const prefix = type.toUpperCase();
    if (!session || session.type !== type) return notFound(`${capitalise(type)} session`, `${prefix}_SESSION_NOT_FOUND`);
    if (session.state.code === "RESOLVED") {
      return conflict(session, `The ${type} session was already resolved; it cannot be rejected.`, `${prefix}_SESSION_INVALID_STATE`);
    }
    if (session.state.code === "OPEN") {
      session.state = { code: "REJECTED", at: this.now().toISOString(), reason: reason.code, merchantMessage: reason.merchantMessage ?? null };
    }
    return { session, userErrors: [] };
  }

  configure(externalHandle: string | null, ready: boolean): PaymentsAppConfiguration {
    const configuration = { externalHandle, ready, at: this.now().toISOString() };
    this.configurationHistory.push(configuration);
    return configuration;
  }

  private findPaymentByGid(gid: string): PaymentSessionRecord | undefined {
    const session = this.payments.get(gid);
    return session ? this.refreshed(session) : undefined;
  }

  // A pending session nobody finalised in time is closed as failed, so an app that
  // misses the pending window sees a conflict instead of a silent success.
  private refreshed<S extends SessionRecord>(session: S): S {
    if (session.type === "payment" && session.state.code === "PENDING") {
      const expires = Date.parse(session.state.pendingExpiresAt);
      if (this.now().getTime() >= expires) {
        session.state = {
          code: "REJECTED",
          at: new Date(expires).toISOString(),
          reason: "PROCESSING_ERROR",
          merchantMessage: "The pending payment expired before the payments app finalised it.",
          expired: true,
        };
      }
    }
    return session;
  }
}

function notFound<S>(noun: string, code?: string): TransitionResult<S> {
  return { session: null, userErrors: [{ field: ["id"], message: `${noun} not found`, ...(code ? { code } : {}) }] };
}

function conflict<S>(session: S, message: string, code?: string, field: string[] | null = null): TransitionResult<S> {
  return { session, userErrors: [{ field, message, ...(code ? { code } : {}) }] };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
