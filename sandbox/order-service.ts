// The life of an order: creation, the customer's currency choice, payments,
// confirmations and the merchant's actions, plus the time-based ends (EX at
// expired_time, CA after 24 h without a currency). Every status change is
// saved and then announced to the device's notification URL. All state
// changes run one at a time through a serial queue.
import { randomBytes, randomUUID } from "node:crypto";
import { findCurrency, type CurrencyDefinition } from "./catalogue.js";
import type { Clock } from "./clock.js";
import { amountLimitProblem, type CreateOrderInput } from "./create-order-input.js";
import { Dec } from "./decimal.js";
import { blockHeightAt, paymentTargetFor, transactionHash } from "./payment-targets.js";
import { expectedInputAmount, rateInFiat } from "./price-feed.js";
import { pythonJsonDumps } from "./python-json.js";
import type { SerialQueue } from "./serial-queue.js";
import { isFinalStatus, type OrderStatus } from "./statuses.js";
import type { DeviceRecord, OrderRecord, SandboxStore, TransactionRecord } from "./store.js";
import type { WebhookDispatcher } from "./webhook-dispatcher.js";
import { webhookPayload } from "./payment-view.js";

/** An NR order that never got a currency is cancelled after this long. */
export const NR_CANCEL_AFTER_MS = 24 * 60 * 60 * 1000;

export interface OrderSnapshot {
  order: OrderRecord;
  device: DeviceRecord;
  transactions: TransactionRecord[];
}

export type OrderAction =
  | { action: "choose_currency"; currency: string }
  | { action: "pay"; amount: string }
  | { action: "confirm" }
  | { action: "confirm_once" }
  | { action: "fail" }
  | { action: "expire" }
  | { action: "complete_by_merchant" }
  | { action: "delete" };

export type ActionOutcome = { ok: true; snapshot: OrderSnapshot } | { ok: false; status: 400 | 404 | 409; detail: string };

const PAY_AMOUNT = /^\d+(\.\d+)?$/;

export class OrderService {
  constructor(
    private readonly store: SandboxStore,
    private readonly clock: Clock,
    private readonly dispatcher: WebhookDispatcher,
    private readonly serial: SerialQueue,
  ) {}

  private nowMs(): number {
    return this.clock.now().getTime();
  }

  private async newShortCode(): Promise<string> {
    for (;;) {
      const code = randomBytes(4).toString("hex");
      if (!(await this.store.shortCodeExists(code))) return code;
    }
  }

  createOrder(device: DeviceRecord, input: CreateOrderInput): Promise<OrderRecord> {
    return this.serial.run(async () => {
      const now = this.nowMs();
      const identifier = randomUUID();
      const shortCode = await this.newShortCode();
      const base: Omit<OrderRecord, "id"> = {
        identifier,
        shortCode,
        merchantId: device.merchantId,
        deviceId: device.id,
        createdMs: now,
        editedMs: now,
        status: "NR",
        fiat: input.fiat,
        fiatAmount: input.amount.toFixed(2),
        currencyId: null,
        cryptoAmount: null,
        rate: null,
        address: null,
        tagMemo: null,
        paymentUri: null,
        fixedMs: null,
        expiredMs: null,
        urlOk: input.urlOk,
        urlKo: input.urlKo,
        urlStandby: input.urlStandby,
        language: input.language,
        notes: input.notes,
        reference: input.reference,
        internalData: input.internalData,
        customer: input.customer,
      };
      const withCurrency = input.currency ? fixCurrency(base, input.currency, now) : base;
      return this.store.insertOrder(withCurrency);
    });
  }

  private async snapshot(order: OrderRecord): Promise<OrderSnapshot> {
    const device = await this.store.getDevice(order.deviceId);
    if (!device) throw new Error(`order ${order.identifier} has no device`);
    return { order, device, transactions: await this.store.listTransactions(order.id) };
  }

  /** Applies a time-based end that is due (lazily, when an order is read or acted on). */
  private async settleTime(order: OrderRecord): Promise<OrderRecord> {
    const now = this.nowMs();
    let next: OrderStatus | null = null;
    if (order.status === "PE" && order.expiredMs !== null && order.expiredMs <= now) next = "EX";
    else if (order.status === "NR" && order.createdMs + NR_CANCEL_AFTER_MS <= now) next = "CA";
    if (next === null) return order;
    const changed = { ...order, status: next, editedMs: now };
    await this.store.saveOrder(changed);
    await this.announce(changed);
    return changed;
  }

  private async announce(order: OrderRecord): Promise<void> {
    const device = await this.store.getDevice(order.deviceId);
    if (!device?.notificationUrl) return;
    const transactions = await this.store.listTransactions(order.id);
    this.dispatcher.enqueue({
      deviceId: device.id,
      orderIdentifier: order.identifier,
      status: order.status,
      url: device.notificationUrl,
      secretKeyHex: device.secretKeyHex,
      body: pythonJsonDumps(webhookPayload(order, transactions)),
    });
  }

  /** The order if the device's merchant owns it. */
  findForMerchant(device: DeviceRecord, identifier: string): Promise<OrderSnapshot | null> {
    return this.serial.run(async () => {
      const found = await this.store.getOrderByIdentifier(identifier);
      if (!found || found.merchantId !== device.merchantId) return null;
      return this.snapshot(await this.settleTime(found));
    });
  }

  findByIdentifier(identifier: string): Promise<OrderSnapshot | null> {
    return this.serial.run(async () => {
      const found = await this.store.getOrderByIdentifier(identifier);
      return found ? this.snapshot(await this.settleTime(found)) : null;
    });
  }

  findByShortCode(code: string): Promise<OrderSnapshot | null> {
    return this.serial.run(async () => {
      const found = await this.store.getOrderByShortCode(code);
      return found ? this.snapshot(await this.settleTime(found)) : null;
    });
  }

  listForDevice(device: DeviceRecord, fromMs: number, toMs: number): Promise<OrderSnapshot[]> {
    return this.serial.run(async () => {
      const orders = await this.store.listOrdersOfDevice(device.id, fromMs, toMs);
      const out: OrderSnapshot[] = [];
      for (const o of orders) out.push({ order: await this.settleTime(o), device, transactions: await this.store.listTransactions(o.id) });
      return out;
    });
  }

  listRecent(limit: number): Promise<OrderSnapshot[]> {
    return this.serial.run(async () => {
      const out: OrderSnapshot[] = [];
      for (const o of await this.store.listRecentOrders(limit)) out.push(await this.snapshot(await this.settleTime(o)));
      return out;
    });
  }

  /** The ticker's job: ends every order whose time has come. Returns how many changed. */
  runDueTransitions(): Promise<number> {
    return this.serial.run(async () => {
      const now = this.nowMs();
      const due = await this.store.listOrdersDueForTime(now, now - NR_CANCEL_AFTER_MS);
      for (const o of due) await this.settleTime(o);
      return due.length;
    });
  }

  act(identifier: string, request: OrderAction): Promise<ActionOutcome> {
    return this.serial.run(async () => {
      const found = await this.store.getOrderByIdentifier(identifier);
      if (!found) return { ok: false, status: 404, detail: "No payment with this identifier." };
      const order = await this.settleTime(found);
      const transactions = await this.store.listTransactions(order.id);
      const outcome = await this.applyAction(order, transactions, request);
      if (!outcome.ok) return outcome;
      return { ok: true, snapshot: await this.snapshot(outcome.order) };
    });
  }

  private async transition(order: OrderRecord, status: OrderStatus, now: number): Promise<OrderRecord> {
    const changed = { ...order, status, editedMs: now };
    await this.store.saveOrder(changed);
    await this.announce(changed);
    return changed;
  }

  private async applyAction(
    order: OrderRecord,
    transactions: TransactionRecord[],
    request: OrderAction,
  ): Promise<{ ok: true; order: OrderRecord } | { ok: false; status: 400 | 404 | 409; detail: string }> {
    const now = this.nowMs();
    const notAllowed = (what: string) => ({
      ok: false as const,
      status: 409 as const,
      detail: `Cannot ${what}: the payment is in status ${order.status}.`,
    });
    switch (request.action) {
      case "choose_currency": {
        if (order.status !== "NR") return notAllowed("choose a currency");
        const def = findCurrency(request.currency);
        if (!def) return { ok: false, status: 400, detail: `Currency "${request.currency}" not found.` };
        const problem = amountLimitProblem(def, new Dec(order.fiatAmount), order.fiat);
        if (problem) return { ok: false, status: 409, detail: problem };
        const fixed = { ...fixCurrency(order, def, now), id: order.id };
        return { ok: true, order: await this.transition(fixed, "PE", now) };
      }
      case "pay":
        return this.pay(order, transactions, request.amount, now);
      case "confirm": {
        const pending = transactions.filter((t) => !t.confirmed);
        const lateOnly = order.status === "EX" && pending.length > 0;
        if (order.status !== "AC" && !lateOnly) return notAllowed("confirm");
        const def = currencyOf(order);
        const block = blockHeightAt(def.chain, new Date(now));
        const confirmed = pending.map((t) => ({ ...t, confirmed: true, block }));
        if (lateOnly) {
          const changed = { ...order, editedMs: now };
          await this.store.saveOrder(changed, [], confirmed);
          return { ok: true, order: changed };
        }
        const total = transactions.reduce((sum, t) => sum.plus(t.amount), new Dec(0));
        const expected = new Dec(order.cryptoAmount ?? "0");
        let status: OrderStatus;
        if (total.lt(expected)) status = "IA";
        else if (order.expiredMs !== null && now > order.expiredMs) status = "OC";
        else status = "CO";
        const changed = { ...order, status, editedMs: now };
        await this.store.saveOrder(changed, [], confirmed);
        await this.announce(changed);
        return { ok: true, order: changed };
      }
      case "confirm_once": {
        // The first block confirmation, before the gateway completes the order: the service's
        // "AC with safe=true" (FACTS.md: safe means one confirmation). Every unconfirmed
        // transaction gets its block and counts as confirmed, so confirmed_amount takes the
        // whole received amount while the status stays AC; a later `confirm` ends the order
        // and keeps these blocks. The status does not change, so no webhook is sent. A
        // Lightning order never rests in AC, so it never gets here.
        if (order.status !== "AC") return notAllowed("confirm once");
        const pending = transactions.filter((t) => !t.confirmed);
        if (pending.length === 0) {
          return { ok: false, status: 409, detail: "Cannot confirm once: every transaction of the payment already has a block confirmation." };
        }
        const block = blockHeightAt(currencyOf(order).chain, new Date(now));
        const changed = { ...order, editedMs: now };
        await this.store.saveOrder(changed, [], pending.map((t) => ({ ...t, confirmed: true, block })));
        return { ok: true, order: changed };
      }
      case "fail":
        if (order.status !== "AC") return notAllowed("fail the payment");
        return { ok: true, order: await this.transition(order, "FA", now) };
      case "expire":
        if (order.status === "PE") return { ok: true, order: await this.transition({ ...order, expiredMs: Math.min(order.expiredMs ?? now, now) }, "EX", now) };
        if (order.status === "NR") return { ok: true, order: await this.transition(order, "CA", now) };
        return notAllowed("expire");
      case "complete_by_merchant":
        if (isFinalStatus(order.status)) return notAllowed("complete by merchant");
        return { ok: true, order: await this.transition(order, "CM", now) };
      case "delete":
        if (isFinalStatus(order.status)) return notAllowed("delete");
        return { ok: true, order: await this.transition(order, "DE", now) };
    }
  }

  private async pay(
    order: OrderRecord,
    transactions: TransactionRecord[],
    requested: string,
    now: number,
  ): Promise<{ ok: true; order: OrderRecord } | { ok: false; status: 400 | 409; detail: string }> {
    if (order.status === "NR") return { ok: false, status: 409, detail: "Cannot pay: no currency has been chosen yet (status NR)." };
    if (!["PE", "AC", "EX"].includes(order.status)) {
      return { ok: false, status: 409, detail: `Cannot pay: the payment is in status ${order.status}.` };
    }
    const def = currencyOf(order);
    // A BOLT11 invoice expires with the order (payment-targets.ts): an expired one cannot be
    // paid, so Lightning has no late payment (late funds are on-chain ones, sent to an address).
    if (order.status === "EX" && def.chain === "lightning") {
      return { ok: false, status: 409, detail: "Cannot pay: the Lightning invoice expired with the order." };
    }
    const expected = new Dec(order.cryptoAmount ?? "0");
    const received = transactions.reduce((sum, t) => sum.plus(t.amount), new Dec(0));
    const remaining = order.status === "EX" ? expected : expected.minus(received);
    let amount: Dec;
    if (requested === "exact" || requested === "less" || requested === "more") {
      if (remaining.lte(0)) return { ok: false, status: 409, detail: "Cannot pay: the expected amount has already been received." };
      if (requested === "exact") amount = remaining;
      else if (requested === "less") amount = Dec.max(remaining.div(2).toDecimalPlaces(def.decimals, Dec.ROUND_DOWN), new Dec(10).pow(-def.decimals));
      else amount = remaining.times("1.1").toDecimalPlaces(def.decimals, Dec.ROUND_UP);
    } else {
      if (!PAY_AMOUNT.test(requested)) return { ok: false, status: 400, detail: 'amount must be "exact", "less", "more" or a positive decimal string.' };
      amount = new Dec(requested);
      if (amount.lte(0) || amount.decimalPlaces() > def.decimals) {
        return { ok: false, status: 400, detail: `amount must be positive with at most ${def.decimals} decimal places for ${def.symbol}.` };
      }
    }
    if (def.chain === "lightning" && !amount.eq(remaining)) {
      return { ok: false, status: 409, detail: "A Lightning invoice can only be paid for its exact amount." };
    }
    const tx: Omit<TransactionRecord, "id"> = {
      orderId: order.id,
      currency: def.symbol,
      amount: amount.toFixed(),
      txHash: transactionHash(def.chain, order.identifier, transactions.length),
      block: null,
      confirmed: false,
      createdMs: now,
      late: order.status === "EX",
    };
    if (order.status !== "PE") {
      // A second payment while AC, or a late one after EX: recorded, status unchanged.
      const changed = { ...order, editedMs: now };
      await this.store.saveOrder(changed, [tx]);
      return { ok: true, order: changed };
    }
    const seen = { ...order, status: "AC" as const, editedMs: now };
    await this.store.saveOrder(seen, [tx]);
    await this.announce(seen);
    if (def.chain !== "lightning") return { ok: true, order: seen };
    // Lightning settles at once: the payment is final as soon as it is seen.
    const [stored] = (await this.store.listTransactions(order.id)).filter((t) => !t.confirmed);
    const done = { ...seen, status: "CO" as const };
    await this.store.saveOrder(done, [], stored ? [{ ...stored, confirmed: true, block: null }] : []);
    await this.announce(done);
    return { ok: true, order: done };
  }
}

function currencyOf(order: OrderRecord): CurrencyDefinition {
  const def = order.currencyId === null ? undefined : findCurrency(order.currencyId);
  if (!def) throw new Error(`order ${order.identifier} has no known currency`);
  return def;
}

/** Fixes the currency of an order: rate, crypto amount, address, memo, URI and expiry. */
function fixCurrency<T extends Omit<OrderRecord, "id">>(order: T, def: CurrencyDefinition, now: number): T {
  const at = new Date(now);
  const rate = rateInFiat(def, order.fiat, at);
  const crypto = expectedInputAmount(new Dec(order.fiatAmount), rate, def.decimals);
  const target = paymentTargetFor(def, order.identifier, crypto, at, `Payment ${order.shortCode}`);
  return {
    ...order,
    currencyId: def.symbol,
    rate: rate.toFixed(),
    cryptoAmount: crypto.toFixed(),
    address: target.address,
    tagMemo: target.tagMemo,
    paymentUri: target.paymentUri,
    fixedMs: now,
    expiredMs: now + def.windowMinutes * 60_000,
    status: "PE",
    editedMs: now,
  };
}
