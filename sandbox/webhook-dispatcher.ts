// Sends signed webhooks to devices' notification URLs, one queue per device so
// deliveries keep their order, with a 5 s time-out and no retries (like the
// real service). Per-device fault modes drop, duplicate, delay or reorder
// deliveries, and every attempt (or deliberate drop) is recorded.
import type { Clock } from "./clock.js";
import { signWebhook } from "./webhook-signer.js";
import type { SandboxStore } from "./store.js";
import type { SandboxLogger } from "./logger.js";

export const WEBHOOK_FAULT_MODES = ["deliver", "drop", "duplicate", "delay", "reorder"] as const;
export type WebhookFaultMode = (typeof WEBHOOK_FAULT_MODES)[number];

export interface WebhookFault {
  mode: WebhookFaultMode;
  delayMs: number;
  /** Deliveries still affected; null = until changed. */
  remaining: number | null;
}

export interface WebhookMessage {
  deviceId: number;
  orderIdentifier: string;
  status: string;
  url: string;
  secretKeyHex: string;
  body: string;
}

interface SignedMessage extends WebhookMessage {
  headers: Record<string, string>;
}

const DEFAULT_REORDER_HOLD_MS = 2000;

export class WebhookDispatcher {
  private readonly faults = new Map<number, WebhookFault>();
  private readonly chains = new Map<number, Promise<void>>();
  private readonly held = new Map<number, { message: WebhookMessage; timer: NodeJS.Timeout }>();
  private readonly shutdown = new AbortController();

  constructor(
    private readonly store: SandboxStore,
    private readonly clock: Clock,
    private readonly logger: SandboxLogger,
    private readonly wallClock: Clock,
    private readonly timeoutMs = 5000,
  ) {}

  setFault(deviceId: number, fault: WebhookFault): void {
    this.faults.set(deviceId, fault);
  }

  getFault(deviceId: number): WebhookFault {
    return this.faults.get(deviceId) ?? { mode: "deliver", delayMs: 0, remaining: null };
  }

  private takeFault(deviceId: number): WebhookFault {
    const fault = this.getFault(deviceId);
    if (fault.mode === "deliver") return fault;
    if (fault.remaining !== null) {
      const remaining = fault.remaining - 1;
      if (remaining <= 0) this.faults.delete(deviceId);
      else this.faults.set(deviceId, { ...fault, remaining });
    }
    return fault;
  }

  private chain(deviceId: number, step: () => Promise<void>): void {
    const previous = this.chains.get(deviceId) ?? Promise.resolve();
    const next = previous.then(step).catch((err: unknown) => {
      this.logger.error("webhook queue step failed", { error: String(err) });
    });
    this.chains.set(deviceId, next);
  }

  enqueue(message: WebhookMessage): void {
    if (this.shutdown.signal.aborted) return;
    const waiting = this.held.get(message.deviceId);
    if (waiting) {
      // A held delivery goes out right after the next one: that is the reordering.
      clearTimeout(waiting.timer);
      this.held.delete(message.deviceId);
      this.chain(message.deviceId, () => this.send(message, "reorder: overtook a held delivery"));
      this.chain(message.deviceId, () => this.send(waiting.message, "reorder"));
      return;
    }
    const fault = this.takeFault(message.deviceId);
    switch (fault.mode) {
      case "deliver":
        this.chain(message.deviceId, () => this.send(message, null));
        return;
      case "drop":
        this.chain(message.deviceId, () => this.recordDrop(message));
        return;
      case "duplicate":
        // A duplicate may be the same request again (the same bytes, nonce and signature), or the
        // same notification signed again with a later nonce: a receiver must drop both.
        this.chain(message.deviceId, async () => {
          const signed = this.sign(message);
          await this.post(signed, "duplicate");
          await this.post(signed, "duplicate");
          await this.post(this.sign(message, 1), "duplicate: signed again");
        });
        return;
      case "delay":
        this.chain(message.deviceId, async () => {
          await this.sleep(fault.delayMs);
          await this.send(message, `delay ${fault.delayMs} ms`);
        });
        return;
      case "reorder": {
        const holdMs = fault.delayMs > 0 ? fault.delayMs : DEFAULT_REORDER_HOLD_MS;
        const timer = setTimeout(() => {
          if (this.held.get(message.deviceId)?.message !== message) return;
          this.held.delete(message.deviceId);
          this.chain(message.deviceId, () => this.send(message, "reorder: released after hold time"));
        }, holdMs);
        timer.unref();
        this.held.set(message.deviceId, { message, timer });
        return;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.shutdown.signal.aborted) return resolve();
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.shutdown.signal.removeEventListener("abort", onAbort);
        resolve();
      }, ms);
      this.shutdown.signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** The message signed with a nonce of the wall clock's second, `laterSeconds` on. */
  private sign(message: WebhookMessage, laterSeconds = 0): SignedMessage {
    const nonce = String(Math.floor(this.wallClock.now().getTime() / 1000) + laterSeconds);
    return {
      ...message,
      headers: {
        "Content-Type": "application/json",
        "X-NONCE": nonce,
        "X-SIGNATURE": signWebhook(message.secretKeyHex, nonce, message.body),
      },
    };
  }

  private async send(message: WebhookMessage, fault: string | null): Promise<void> {
    await this.post(this.sign(message), fault);
  }

  private async recordDrop(message: WebhookMessage): Promise<void> {
    await this.store.insertDelivery({
      orderIdentifier: message.orderIdentifier,
      deviceId: message.deviceId,
      status: message.status,
      url: message.url,
      headers: {},
      body: message.body,
      fault: "drop",
      statusCode: null,
      ok: false,
      error: "not sent: the device's webhook fault mode dropped it",
      atMs: this.clock.now().getTime(),
    });
  }

  private async post(message: SignedMessage, fault: string | null): Promise<void> {
    let statusCode: number | null = null;
    let error: string | null = null;
    if (this.shutdown.signal.aborted) {
      error = "not sent: the sandbox was shutting down";
    } else {
      try {
        const res = await fetch(message.url, {
          method: "POST",
          headers: message.headers,
          body: message.body,
          redirect: "manual",
          signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.shutdown.signal]),
        });
        statusCode = res.status;
        await res.body?.cancel().catch(() => undefined);
        if (res.status < 200 || res.status > 299) error = `receiver answered ${res.status}`;
      } catch (err) {
        error = describeFetchError(err, this.timeoutMs);
      }
    }
    if (error) this.logger.warn("webhook delivery failed", { order: message.orderIdentifier, status: message.status, error });
    await this.store.insertDelivery({
      orderIdentifier: message.orderIdentifier,
      deviceId: message.deviceId,
      status: message.status,
      url: message.url,
      headers: message.headers,
      body: message.body,
      fault,
      statusCode,
      ok: error === null,
      error,
      atMs: this.clock.now().getTime(),
    });
  }

  /** Resolves when every queued delivery has been attempted (held reorders excepted). */
  async idle(): Promise<void> {
    for (;;) {
      const pending = [...this.chains.values()];
      await Promise.all(pending);
      if ([...this.chains.values()].every((p, i) => p === pending[i]) && this.chains.size === pending.length) return;
    }
  }

  async close(): Promise<void> {
    for (const { message, timer } of this.held.values()) {
      clearTimeout(timer);
      this.chain(message.deviceId, () => this.send(message, "reorder: released at shutdown"));
    }
    this.held.clear();
    this.shutdown.abort();
    await this.idle();
  }
}

function describeFetchError(err: unknown, timeoutMs: number): string {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return `timed out after ${timeoutMs} ms`;
    if (err.name === "AbortError") return "aborted: the sandbox was shutting down";
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    if (cause?.code) return `${err.message}: ${cause.code}`;
    return err.message;
  }
  return String(err);
}
