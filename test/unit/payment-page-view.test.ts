// The shopper's payment page as data: a payment the gateway has seen money for is only
// "received" when the on-chain amounts cover the crypto amount (decided in decimals, not
// from the rounded percentage); short of that the page asks for the rest, exactly, with a
// QR code of the gateway's payment URI for the remainder — until the order's time runs
// out. Once received, or out of time, the page asks for nothing more. Fiat amounts read
// in the shopper's notation, with the fiat's minor digits.
import { describe, expect, it } from "vitest";
import type { Payment, Shop } from "../../generated/prisma/sqlite/client";
import { paymentPageView, paymentStatusView, paysInOrderCoin, shopperStatus, walletUriOf, type PaymentWithShop } from "../../app/payment-page/payment-page.server";
import { paymentProgress, remainderPaymentUri } from "../../app/payment-page/progress";
import { paymentQrSvg } from "../../app/payment-page/qr.server";
import { asksForPayment, statusAt } from "../../app/payment-page/timing";
import { createReturnLinks } from "../../app/payments/return-links";
import type { AppServices } from "../../app/services.server";

const NOW = new Date("2026-05-01T10:00:00Z");
const ADDRESS = "0x3f5ce5fbfe3e9af3971dd833d26ba9b5c936f0be";

const services = {
  links: createReturnLinks("https://app.example", "test-secret"),
  clock: { now: () => NOW },
  // No gateway to ask for the coin's network: the page does without it.
  gateways: { forShop: () => null },
} as unknown as AppServices;

function paymentOf(overrides: Partial<Payment>, amounts: string[] = []): PaymentWithShop {
  // The row as the page reads it; columns the page never looks at may be left out.
  const payment = {
    id: "pay_0123456789",
    shopId: "shop_1",
    shopifyPaymentId: "session-1",
    gid: "gid://shopify/PaymentSession/1",
    groupId: "group-1",
    amount: "49.00",
    currency: "EUR",
    test: true,
    kind: "sale",
    cancelUrl: "https://shop.example/cancel",
    merchantLocale: "en",
    gatewayEnv: "sandbox",
    state: "awaiting_payment",
    gatewayOrderId: "0c4f3a1e-6a43-4d0c-9f55-0d8d2f0f4a11",
    gatewayStatus: "PE",
    gatewayWebUrl: null,
    inputCurrency: "ETH",
    cryptoAmount: "0.0158",
    receivedAmount: "0.0",
    percentage: "0.0",
    paymentUri: `ethereum:${ADDRESS}?amount=0.0158`,
    address: ADDRESS,
    tagMemo: null,
    expiresAt: new Date(NOW.getTime() + 20 * 60_000),
    attention: null,
    attentionDetail: null,
    attentionResolvedAt: null,
    customerEmail: null,
    customerName: null,
    customerPhone: null,
    billingAddress: null,
    sessionClaimUntil: null,
    orderRequestedAt: null,
    responseStatus: null,
    responseBody: null,
    shopifyOutcome: null,
    shopifyState: null,
    nextActionUrl: null,
    pendingSentAt: null,
    finalizedAt: null,
    lastCheckedAt: NOW,
    unverifiedSince: null,
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  } as Payment;
  return { ...payment, shop: { shopDomain: "demo-shop.myshopify.com" } as Shop, transactions: amounts.map((amount) => ({ amount })) };
}

/** The order as the gateway reports it once money arrived (AC), with the on-chain amounts seen. */
function seen(amounts: string[], overrides: Partial<Payment>): PaymentWithShop {
  return paymentOf({ state: "confirming", gatewayStatus: "AC", ...overrides }, amounts);
}

describe("the link that opens the payment request in a wallet app", () => {
  it("is the gateway's URI when its scheme is a payment one, in any letter case, and never another scheme", () => {
    for (const uri of ["bitcoin:bc1qexample?amount=0.001&rbf=false", "ETHEREUM:0xabc?amount=1", "lightning:lnbc10u1pexample", "ripple:rExample?amount=5&dt=123"]) expect(walletUriOf(uri)).toBe(uri);
    for (const uri of ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "https://pay.example/x", "vbscript:x", "lnbc10u1pexample", " bitcoin:bc1q", ""]) expect(walletUriOf(uri)).toBeNull();
    expect(walletUriOf(null)).toBeNull();
  });
});

describe("a payment URI a wallet would read as another coin than the order's", () => {
  it("is a chain's own coin on a chain that carries tokens: offered for that coin only, known by its symbol and the ticker ending the gateway's name for it", () => {
    const uri = `ethereum:${ADDRESS}?amount=49.9`;
    expect(paysInOrderCoin(uri, "ETH", { name: "Ethereum ETH" })).toBe(true);
    expect(paysInOrderCoin(uri, "ETH_TEST3", { name: "Ethereum Goerli ETH" })).toBe(true);
    // 49.9 USDC asked as "ethereum:<address>?amount=49.9" is 49.9 ether to a wallet.
    expect(paysInOrderCoin(uri, "USDC_ERC20", { name: "USD Coin USDC" })).toBe(false);
    expect(paysInOrderCoin(uri, "USDC_TEST3", { name: "USD Coin USDC" })).toBe(false);
    expect(paysInOrderCoin(`polygon:${ADDRESS}?amount=5`, "USDC_POLYGON_NXTB", { name: "USD Coin USDC" })).toBe(false);
    expect(paysInOrderCoin(`POLYGON:${ADDRESS}?amount=5`, "MATIC_POLYGON", { name: "Polygon MATIC" })).toBe(true);
    // The symbol starts with the chain's ticker, the coin is still USDC.
    expect(paysInOrderCoin("tron:TXYZ?amount=5", "TRX_USDC_6NU3", { name: "USD Coin USDC" })).toBe(false);
    expect(paysInOrderCoin("tron:TXYZ?amount=5", "TRX", { name: "Tron TRX" })).toBe(true);
    expect(paysInOrderCoin("solana:So1?amount=5", "USDC_SOL", { name: "USD Coin USDC" })).toBe(false);
    // A token named after the chain's coin is still a token: its symbol says so.
    expect(paysInOrderCoin(uri, "RETH_ERC20", { name: "Rocket Pool ETH" })).toBe(false);
    expect(paysInOrderCoin(uri, "CBETH", { name: "Coinbase Wrapped Staked ETH" })).toBe(false);
  });

  it("without the gateway's entry of the coin, is offered only when the symbol is the chain's ticker itself", () => {
    const uri = `ethereum:${ADDRESS}?amount=1`;
    expect(paysInOrderCoin(uri, "ETH", null)).toBe(true);
    expect(paysInOrderCoin(uri, "eth", null)).toBe(true);
    for (const symbol of ["USDC_ERC20", "ETH_TEST3", "USDT"]) expect(paysInOrderCoin(uri, symbol, null), symbol).toBe(false);
  });

  it("names the token when it is an EIP-681 transfer, and any URI of a chain with one coin pays in it", () => {
    expect(paysInOrderCoin(`ethereum:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48/transfer?address=${ADDRESS}&uint256=4.99e7`, "USDC_ERC20", { name: "USD Coin USDC" })).toBe(true);
    expect(paysInOrderCoin("bitcoin:bc1qexample?amount=0.001", "BTC", null)).toBe(true);
    expect(paysInOrderCoin("litecoin:ltc1qexample?amount=0.1", "LTC_TEST", { name: "Litecoin Test LTC" })).toBe(true);
  });

  it("is shown as neither a QR code nor a wallet link: the shopper copies the address and the amount", async () => {
    const uri = `ethereum:${ADDRESS}?amount=49.9`;
    for (const payment of [paymentOf({ inputCurrency: "USDC_ERC20", cryptoAmount: "49.9", paymentUri: uri }), seen(["20.0"], { inputCurrency: "USDC_ERC20", cryptoAmount: "49.9", paymentUri: uri, percentage: "40.0" })]) {
      const view = await paymentPageView(services, payment);
      expect(view.pay).toMatchObject({ coin: "USDC_ERC20", address: ADDRESS, amount: "49.9", qrSvg: null, walletUri: null });
    }
    // Nor when the gateway gave no address (no invoice either: only Lightning's coin has one).
    const withoutAddress = await paymentPageView(services, paymentOf({ inputCurrency: "USDC_ERC20", cryptoAmount: "49.9", paymentUri: uri, address: null }));
    expect({ qr: withoutAddress.pay?.qrSvg ?? null, link: withoutAddress.pay?.walletUri ?? null }).toEqual({ qr: null, link: null });
    // The chain's own coin, the same way, keeps both.
    const ether = await paymentPageView(services, paymentOf({}));
    expect(ether.pay?.walletUri).toBe(`ethereum:${ADDRESS}?amount=0.0158`);
    expect(ether.pay?.qrSvg).not.toBeNull();
  });
});

describe("the payment page of a payment the gateway has seen money for", () => {
  it("asks for the rest when half arrived (a wallet that kept its fee), with the exact remainder, its QR code and the countdown", async () => {
    const payment = seen(["0.0079"], { receivedAmount: "24.5", percentage: "50.0" });
    expect(shopperStatus(payment, NOW)).toBe("partial");
    const view = await paymentPageView(services, payment);
    expect(view.status).toBe("partial");
    expect(view.received).toBe("€24.50");
    expect(view.receivedCrypto).toBe("0.0079");
    expect(view.remaining).toBe("0.0079");
    expect(view.expiresAtMs).toBe(NOW.getTime() + 20 * 60_000);
    // The QR code asks for the remainder, not the full amount again.
    expect(view.pay?.qrSvg).toBe(await paymentQrSvg(`ethereum:${ADDRESS}?amount=0.0079`));
    // The same request opens the wallet app on a phone.
    expect(view.pay?.walletUri).toBe(`ethereum:${ADDRESS}?amount=0.0079`);
    expect(view.pay?.amount).toBe("0.0158");
    expect(paymentStatusView(services, payment).status).toBe("partial");
  });

  it("shows the fiat received to the fiat's minor digits when the gateway's float carries noise", async () => {
    const payment = seen(["0.0079"], { receivedAmount: "24.499999999999996", percentage: "50.0" });
    expect((await paymentPageView(services, payment)).received).toBe("€24.50");
    const yen = seen(["0.0079"], { receivedAmount: "3999.5000000000005", percentage: "50.0", currency: "JPY", amount: "7999" });
    expect((await paymentPageView(services, yen)).received).toBe("¥4,000");
  });

  it("decides on the amounts, not the rounded percentage: one unit short is still short", async () => {
    const payment = seen(["0.01", "0.00579999"], { cryptoAmount: "0.01580000", receivedAmount: "49.0", percentage: "100.0" });
    expect(shopperStatus(payment, NOW)).toBe("partial");
    const view = await paymentPageView(services, payment);
    expect(view.receivedCrypto).toBe("0.01579999");
    expect(view.remaining).toBe("0.00000001");
  });

  it("is confirming once the amounts cover the crypto amount, or more, and asks for no second payment: no QR code, amount or address to send to", async () => {
    for (const amounts of [["0.0158"], ["0.0079", "0.0079"], ["0.01738"]]) {
      const payment = seen(amounts, { receivedAmount: "49.0", percentage: "100.0" });
      expect(shopperStatus(payment, NOW)).toBe("confirming");
      const view = await paymentPageView(services, payment);
      expect(view.remaining).toBeNull();
      expect(view.pay).toBeNull();
      expect(view.coin).toBe("ETH");
    }
  });

  it("is confirming for an order the gateway shows paid while the payment stays open (held for the merchant: an order for other terms), and asks for no second payment, even past the order's time", async () => {
    for (const gatewayStatus of ["CO", "CM"]) {
      for (const state of ["awaiting_payment", "confirming"]) {
        const payment = seen(["0.0158"], { gatewayStatus, state, receivedAmount: "49.0", percentage: "100.0", attention: "amount_mismatch", expiresAt: new Date(NOW.getTime() - 60_000) });
        expect(shopperStatus(payment, NOW), `${gatewayStatus} ${state}`).toBe("confirming");
        expect((await paymentPageView(services, payment)).pay).toBeNull();
      }
    }
  });

  it("is confirming for an order that received the whole amount (AC) while the payment is held for a person (an order for other terms), and asks for no second payment", async () => {
    const held = { state: "awaiting_payment", gatewayStatus: "AC", attention: "amount_mismatch", percentage: "100.0", receivedAmount: "49.0" };
    const payment = paymentOf(held, ["0.0158"]);
    expect(shopperStatus(payment, NOW)).toBe("confirming");
    const view = await paymentPageView(services, payment);
    expect(view.status).toBe("confirming");
    expect(view.pay).toBeNull();
    // Short of the amount, it asks for the rest only.
    const short = await paymentPageView(services, paymentOf({ ...held, percentage: "50.0" }, ["0.0079"]));
    expect(short.status).toBe("partial");
    expect(short.remaining).toBe("0.0079");
  });

  it("asks for nothing while the gateway reports a status the app does not know (left for the merchant), whatever arrived before", async () => {
    for (const overrides of [{ gatewayStatus: "RF" }, { gatewayStatus: "RF", attention: "unknown_status" }, { state: "confirming", gatewayStatus: "ZQ", percentage: "100.0" }]) {
      const payment = paymentOf(overrides, ["0.0158"]);
      expect(shopperStatus(payment, NOW), JSON.stringify(overrides)).toBe("review");
      // Not even once the order's time has run out: what happened to the order is not known.
      expect(shopperStatus(payment, new Date(NOW.getTime() + 60 * 60_000))).toBe("review");
      const view = await paymentPageView(services, payment);
      expect(view.pay).toBeNull();
      expect(view.gatewayUrl).toBeNull();
      expect(asksForPayment(view.status)).toBe(false);
    }
    // Money notified and then a status the app does not know: still nothing asked, nothing confirmed.
    expect(shopperStatus(paymentOf({ gatewayStatus: "RF" }), NOW, "covered")).toBe("review");
    // Ended payments read as they ended.
    expect(shopperStatus(paymentOf({ state: "paid", gatewayStatus: "RF" }), NOW)).toBe("paid");
    expect(shopperStatus(paymentOf({ state: "failed", gatewayStatus: "RF" }), NOW)).toBe("failed");
  });

  it("sends a shopper who gave the payment up back to the checkout while nothing has arrived, and shows the payment once money has", async () => {
    const waiting = paymentOf({});
    expect((await paymentPageView(services, waiting, null, true)).redirectUrl).toBe("https://shop.example/cancel");
    expect(paymentStatusView(services, waiting, null, true).redirectUrl).toBe("https://shop.example/cancel");
    const choosing = paymentOf({ state: "started", gatewayOrderId: null, gatewayStatus: null, inputCurrency: null, paymentUri: null, address: null, cryptoAmount: null });
    // Sent on without asking the gateway for its coin list or the coin's network (calls that count against the quota).
    const notAsking = { ...services, gateways: { forShop: () => expect.unreachable("the gateway was asked") } } as unknown as AppServices;
    expect(await paymentPageView(notAsking, choosing, null, true)).toMatchObject({ redirectUrl: "https://shop.example/cancel", coins: null });
    expect(await paymentPageView(notAsking, waiting, null, true)).toMatchObject({ redirectUrl: "https://shop.example/cancel", pay: null, unpayable: false });
    // Not left: the page as ever.
    expect((await paymentPageView(services, waiting)).redirectUrl).toBeNull();
    // Sent just before leaving: what arrived is shown, and the rest asked for.
    const partly = await paymentPageView(services, seen(["0.0079"], { receivedAmount: "24.5", percentage: "50.0" }), null, true);
    expect(partly).toMatchObject({ status: "partial", redirectUrl: null, remaining: "0.0079" });
    expect(paymentStatusView(services, seen(["0.0158"], { receivedAmount: "49.0", percentage: "100.0" }), null, true)).toMatchObject({ status: "confirming", redirectUrl: null });
    // Ended: on through the return route, as for any payment.
    expect(paymentStatusView(services, paymentOf({ state: "paid", gatewayStatus: "CO" }), null, true).redirectUrl).toMatch(/^https:\/\/app\.example\/payments\/return\/.*\/ok/);
  });

  it("waits for a payment nothing was sent for yet", async () => {
    const view = await paymentPageView(services, paymentOf({}));
    expect(view.status).toBe("waiting");
    expect(view.remaining).toBeNull();
    expect(view.receivedCrypto).toBeNull();
  });

  it("writes what arrived, in the coin and as a percentage, in the page's notation, and the amounts to copy into a wallet as the gateway gave them", async () => {
    const partly = { receivedAmount: "24.5", percentage: "50.0" };
    const spanish = await paymentPageView(services, seen(["0.0079"], { ...partly, merchantLocale: "es-ES" }));
    expect(spanish).toMatchObject({ received: "24,50\u00a0€", receivedCryptoText: "0,0079", percentageText: "50,0\u00a0%" });
    const german = await paymentPageView(services, seen(["0.0079"], { ...partly, merchantLocale: "de" }));
    expect(german).toMatchObject({ receivedCryptoText: "0,0079", percentageText: "50,0\u00a0%" });
    const english = await paymentPageView(services, seen(["0.0079"], partly));
    expect(english).toMatchObject({ received: "€24.50", receivedCryptoText: "0.0079", percentageText: "50.0%" });
    // Copied into a wallet, or compared with the live status: as the gateway gave them, in every language.
    for (const view of [spanish, german, english]) {
      expect(view).toMatchObject({ receivedCrypto: "0.0079", remaining: "0.0079", percentage: "50.0" });
      expect(view.pay).toMatchObject({ amount: "0.0158", address: ADDRESS });
    }
  });

  it("writes the received fiat amount with its currency's minor digits, in the shopper's notation", async () => {
    expect((await paymentPageView(services, seen(["0.0079"], { receivedAmount: "24.5", percentage: "50.0" }))).received).toBe("€24.50");
    const yen = seen(["0.0161"], { amount: "2000", currency: "JPY", cryptoAmount: "0.0322", paymentUri: `ethereum:${ADDRESS}?amount=0.0322`, receivedAmount: "1000.0", percentage: "50.0" });
    expect((await paymentPageView(services, yen)).received).toBe("¥1,000");
  });
});

describe("the payment page once the order's time has run out", () => {
  const expired = { expiresAt: new Date(NOW.getTime() - 1_000) };

  it("stops asking a partly paid shopper for the rest (the order stays AC, and the rest sent late would end it OC), and still says what arrived", async () => {
    const payment = seen(["0.0079"], { receivedAmount: "24.5", percentage: "50.0", ...expired });
    expect(shopperStatus(payment, NOW)).toBe("partial_expired");
    const view = await paymentPageView(services, payment);
    expect(view.status).toBe("partial_expired");
    expect(view.remaining).toBeNull();
    expect(view.pay).toBeNull();
    expect(view.receivedCrypto).toBe("0.0079");
    expect(view.received).toBe("€24.50");
    expect(view.coin).toBe("ETH");
    // The live status says so too, so an open page reloads into it.
    expect(paymentStatusView(services, payment).status).toBe("partial_expired");
  });

  it("stops asking a shopper who sent nothing to pay, from the very moment of the expiry", async () => {
    const atExpiry = paymentOf({ expiresAt: NOW });
    expect(shopperStatus(atExpiry, NOW)).toBe("expired");
    const view = await paymentPageView(services, atExpiry);
    expect(view.status).toBe("expired");
    expect(view.pay).toBeNull();
    expect(paymentStatusView(services, atExpiry).status).toBe("expired");
  });

  it("changes nothing for a payment already received, or one whose expiry is not known yet", async () => {
    expect(shopperStatus(seen(["0.0158"], { receivedAmount: "49.0", percentage: "100.0", ...expired }), NOW)).toBe("confirming");
    const unknownExpiry = await paymentPageView(services, paymentOf({ expiresAt: null }));
    expect(unknownExpiry.status).toBe("waiting");
    expect(unknownExpiry.pay?.amount).toBe("0.0158");
  });

  it("is decided the same way in the browser when the countdown reaches zero", () => {
    const expiresAtMs = NOW.getTime();
    expect(statusAt("waiting", expiresAtMs, expiresAtMs - 1)).toBe("waiting");
    expect(statusAt("waiting", expiresAtMs, expiresAtMs)).toBe("expired");
    expect(statusAt("partial", expiresAtMs, expiresAtMs - 1)).toBe("partial");
    expect(statusAt("partial", expiresAtMs, expiresAtMs + 1)).toBe("partial_expired");
    expect(statusAt("confirming", expiresAtMs, expiresAtMs + 1)).toBe("confirming");
    expect(statusAt("partial", null, expiresAtMs + 1)).toBe("partial");
    // Only these two show what to send.
    expect(asksForPayment("waiting") && asksForPayment("partial")).toBe(true);
    expect((["partial_expired", "expired", "confirming", "paid", "choosing", "failed"] as const).some(asksForPayment)).toBe(false);
  });
});

describe("the payment URI for the remainder", () => {
  it("is the gateway's URI with the amount still due, everything else kept", () => {
    expect(remainderPaymentUri(`ethereum:${ADDRESS}?amount=0.0158`, "0.0158", "0.0079")).toBe(`ethereum:${ADDRESS}?amount=0.0079`);
    expect(remainderPaymentUri("ripple:rDsbeomae4FXwgQTJp9Rs64Qg9vDiTCdBv?amount=12.5&dt=123456789", "12.5", "0.25")).toBe(
      "ripple:rDsbeomae4FXwgQTJp9Rs64Qg9vDiTCdBv?amount=0.25&dt=123456789",
    );
  });

  it("is not made up when the URI is not of the gateway's documented form or asks for another amount", () => {
    expect(remainderPaymentUri("lnbc158u1p3xyz", "0.0158", "0.0079")).toBeNull();
    expect(remainderPaymentUri(`ethereum:${ADDRESS}`, "0.0158", "0.0079")).toBeNull();
    expect(remainderPaymentUri(`ethereum:${ADDRESS}?amount=0.0157`, "0.0158", "0.0079")).toBeNull();
    expect(remainderPaymentUri(`ethereum:${ADDRESS}?amount=0.0158&amount=0.0158`, "0.0158", "0.0079")).toBeNull();
  });
});

describe("the on-chain progress of a payment", () => {
  it("is exact to the coin's last decimal: an 18-decimal coin one unit short is short by exactly that unit", () => {
    const progress = paymentProgress("0.123456789012345678", [{ amount: "0.1" }, { amount: "0.023456789012345677" }])!;
    expect(progress.received.toFixed()).toBe("0.123456789012345677");
    expect(progress.remaining.toFixed()).toBe("0.000000000000000001");
    expect(progress.excess.isZero()).toBe(true);
  });

  it("leaves nothing due after an overpayment, and says how much more arrived", () => {
    const progress = paymentProgress("0.001", [{ amount: "0.0011" }])!;
    expect(progress.remaining.isZero()).toBe(true);
    expect(progress.excess.toFixed()).toBe("0.0001");
    expect(paymentProgress("0.001", [])).toBeNull();
  });
});
