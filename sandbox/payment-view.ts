// The wire shapes of an order: the Payment object of GET /orders/ and
// /orders/info, the POST /orders/ response, and the webhook payload. Field
// order follows the service's published examples and recorded responses;
// amounts are Python floats, datetimes are in the service's time zone.
import { gatewayDateTime } from "./clock.js";
import type { DeviceRecord, OrderRecord, TransactionRecord } from "./store.js";
import { orderFigures } from "./order-figures.js";
import { pyFloat, type PyJson } from "./python-json.js";

function iso(ms: number): string {
  return gatewayDateTime(new Date(ms));
}

export function transactionView(t: TransactionRecord): PyJson {
  return {
    confirmed: t.confirmed,
    currency: t.currency,
    amount: pyFloat(t.amount),
    tx_hash: t.txHash,
    block: t.block,
    created_at: iso(t.createdMs),
  };
}

/**
 * The Payment object, fields in the order of the documented listing, which the recorded order
 * of 2022 follows too (url_ko before url_ok, then good_fee, notes, rbf, safe); the documented
 * info example, hand-written, orders them differently.
 */
export function paymentView(order: OrderRecord, device: DeviceRecord, transactions: readonly TransactionRecord[]): PyJson {
  const f = orderFigures(order, transactions);
  return {
    identifier: order.identifier,
    reference: order.reference,
    created_at: iso(order.createdMs),
    edited_at: iso(order.editedMs),
    status: order.status,
    fiat_amount: pyFloat(order.fiatAmount),
    fiat: order.fiat,
    crypto_amount: order.cryptoAmount === null ? null : pyFloat(order.cryptoAmount),
    unconfirmed_amount: pyFloat(f.unconfirmed),
    confirmed_amount: pyFloat(f.confirmed),
    currency_id: order.currencyId,
    merchant_device_id: device.id,
    merchant_device: device.name,
    address: order.address,
    tag_memo: order.tagMemo ?? "",
    url_ko: order.urlKo,
    url_ok: order.urlOk,
    url_standby: order.urlStandby,
    expired_time: order.expiredMs === null ? null : iso(order.expiredMs),
    good_fee: transactions.length > 0,
    notes: order.notes,
    rbf: false,
    safe: f.safe,
    language: order.language,
    percentage: pyFloat(f.percentage),
    received_amount: pyFloat(f.receivedFiat),
    internal_data: order.internalData,
    transactions: transactions.map(transactionView),
  };
}

/**
 * The POST /orders/ response: six fields, plus the payment data once a currency is fixed, in
 * the order the service sends them (recorded responses start with payment_uri and end with
 * language). A coin without a tag/memo answers tag_memo "" here too, as every recorded
 * creation response does, not null.
 */
export function createdOrderView(order: OrderRecord, webUrl: string): PyJson {
  if (order.currencyId === null || order.cryptoAmount === null || order.rate === null || order.paymentUri === null) {
    return {
      identifier: order.identifier,
      web_url: webUrl,
      notes: order.notes,
      reference: order.reference,
      fiat: order.fiat,
      language: order.language,
    };
  }
  return {
    payment_uri: order.paymentUri,
    identifier: order.identifier,
    web_url: webUrl,
    address: order.address,
    tag_memo: order.tagMemo ?? "",
    input_currency: order.currencyId,
    expected_input_amount: pyFloat(order.cryptoAmount),
    rate: pyFloat(order.rate),
    notes: order.notes,
    reference: order.reference,
    fiat: order.fiat,
    language: order.language,
  };
}

/** The webhook body: the official vector's fields in its order, then the later additions. */
export function webhookPayload(order: OrderRecord, transactions: readonly TransactionRecord[]): PyJson {
  const f = orderFigures(order, transactions);
  return {
    fiat_amount: pyFloat(order.fiatAmount),
    status: order.status,
    crypto_amount: order.cryptoAmount === null ? null : pyFloat(order.cryptoAmount),
    unconfirmed_amount: pyFloat(f.unconfirmed),
    confirmed_amount: pyFloat(f.confirmed),
    currency: order.currencyId,
    identifier: order.identifier,
    fiat_currency: order.fiat,
    safe: f.safe,
    received_amount: pyFloat(f.receivedFiat),
    reference: order.reference,
    edited_at: iso(order.editedMs),
  };
}
