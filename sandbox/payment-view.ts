// The wire shapes of an order: the Payment object of GET /orders/ and
// /orders/info, the POST /orders/ response, and the webhook payload. Field
// order follows the service's published examples; amounts are Python floats.
import { isoDateTime } from "./clock.js";
import type { DeviceRecord, OrderRecord, TransactionRecord } from "./store.js";
import { orderFigures } from "./order-figures.js";
import { pyFloat, type PyJson } from "./python-json.js";

function iso(ms: number): string {
  return isoDateTime(new Date(ms));
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
    received_amount: pyFloat(f.receivedFiat),
    currency_id: order.currencyId,
    merchant_device_id: device.id,
    merchant_device: device.name,
    address: order.address,
    tag_memo: order.tagMemo ?? "",
    url_ok: order.urlOk,
    url_ko: order.urlKo,
    url_standby: order.urlStandby,
    expired_time: order.expiredMs === null ? null : iso(order.expiredMs),
    good_fee: transactions.length > 0,
    safe: f.safe,
    rbf: false,
    percentage: pyFloat(f.percentage),
    language: order.language,
    notes: order.notes,
    internal_data: order.internalData,
    transactions: transactions.map(transactionView),
  };
}

/** The POST /orders/ response: six fields, plus the payment data once a currency is fixed. */
export function createdOrderView(order: OrderRecord, webUrl: string): PyJson {
  if (order.currencyId === null || order.cryptoAmount === null || order.rate === null || order.paymentUri === null) {
    return {
      fiat: order.fiat,
      identifier: order.identifier,
      language: order.language,
      notes: order.notes,
      reference: order.reference,
      web_url: webUrl,
    };
  }
  return {
    address: order.address,
    expected_input_amount: pyFloat(order.cryptoAmount),
    fiat: order.fiat,
    identifier: order.identifier,
    input_currency: order.currencyId,
    language: order.language,
    notes: order.notes,
    payment_uri: order.paymentUri,
    rate: pyFloat(order.rate),
    reference: order.reference,
    tag_memo: order.tagMemo,
    web_url: webUrl,
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
