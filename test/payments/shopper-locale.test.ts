// The shopper is spoken to in their own language: Shopify sends the shop's (merchant_locale)
// and the shopper's (customer.locale), and both the gateway's hosted page and the app's own
// payment page take the shopper's, falling back to the shop's.
import { expect, it } from "vitest";
import { pageTexts } from "../../app/payment-page/texts";
import { paymentSessionRequestSchema } from "../../app/payments/shopify-requests";
import { startPaymentSession } from "../../app/payments/start-payment-session";
import { stackForFile } from "../support/stack";

const stack = stackForFile();

async function sessionFor(mode: "app_page" | "gateway", suffix: string, locales: { merchant_locale: string; customer: string | undefined }, shopLanguage: "AUTO" | "as installed" = "AUTO") {
  const { services, shopDomain, standin } = stack();
  await services.db.shop.update({ where: { shopDomain }, data: { checkoutMode: mode, ...(shopLanguage === "AUTO" ? { gatewayLanguage: "AUTO" } : {}) } });
  const template = standin.state.createPaymentSession({ test: true, locale: "en" }).request;
  const request = paymentSessionRequestSchema.parse({
    ...template,
    id: `${template.id}${suffix}`,
    gid: `gid://shopify/PaymentSession/${template.id}${suffix}`,
    group: `${template.group}${suffix}`,
    merchant_locale: locales.merchant_locale,
    customer: { ...template.customer, locale: locales.customer },
  });
  const answer = await startPaymentSession(services, { shopDomain, request });
  expect(answer.status).toBe(200);
  const payment = await services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: request.id } });
  return { payment, redirectUrl: (answer.body as { redirect_url: string }).redirect_url };
}

it("a shop that never chose the gateway page's language has its shoppers spoken to in theirs there", async () => {
  const { services, shopDomain } = stack();
  expect((await services.db.shop.findUniqueOrThrow({ where: { shopDomain } })).gatewayLanguage).toBe("AUTO");
  const hosted = await sessionFor("gateway", "d", { merchant_locale: "en", customer: "es" }, "as installed");
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const info = await services.gateways.forShop(shop, "sandbox")!.client.orderInfo(hosted.payment.gatewayOrderId!);
  expect(info._unsafeUnwrap().language).toBe("ES");
  expect(info._unsafeUnwrap().notes).toBe(`Pago del pedido en ${shopDomain}`);
});

it("a shop that chose the gateway page's language has the order's note in that language, whatever the shopper's", async () => {
  const { services, shopDomain } = stack();
  await services.db.shop.update({ where: { shopDomain }, data: { gatewayLanguage: "DE" } });
  const hosted = await sessionFor("gateway", "c", { merchant_locale: "en", customer: "es" }, "as installed");
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const info = (await services.gateways.forShop(shop, "sandbox")!.client.orderInfo(hosted.payment.gatewayOrderId!))._unsafeUnwrap();
  expect(info.language).toBe("DE");
  expect(info.notes).toBe(`Bezahlung der Bestellung bei ${shopDomain}`);
  await services.db.shop.update({ where: { shopDomain }, data: { gatewayLanguage: "AUTO" } });
});

it("an English-speaking shop's French-speaking shopper gets French on the gateway's page and on the app's own page", async () => {
  const { services, shopDomain } = stack();
  const hosted = await sessionFor("gateway", "g", { merchant_locale: "en", customer: "fr" });
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
  const info = await services.gateways.forShop(shop, "sandbox")!.client.orderInfo(hosted.payment.gatewayOrderId!);
  expect(info._unsafeUnwrap().language).toBe("FR");
  // The order's note, which the gateway's page shows, speaks the page's language too.
  expect(info._unsafeUnwrap().notes).toBe(`Paiement de la commande sur ${shopDomain}`);

  const own = await sessionFor("app_page", "a", { merchant_locale: "en", customer: "fr" });
  const html = await (await fetch(own.redirectUrl)).text();
  expect(html).toContain(pageTexts("fr").chooseCoin);
  expect(html).not.toContain(pageTexts("en").chooseCoin);
});

it("without the shopper's locale, the shop's is spoken", async () => {
  const own = await sessionFor("app_page", "m", { merchant_locale: "de", customer: undefined });
  expect(await (await fetch(own.redirectUrl)).text()).toContain(pageTexts("de").chooseCoin);
});

it("a Brazilian shopper reads Brazil's Portuguese, and amounts as Brazil writes them; a shopper from Portugal reads Portugal's", async () => {
  const brazil = await sessionFor("app_page", "br", { merchant_locale: "en", customer: "pt-BR" });
  const html = await (await fetch(brazil.redirectUrl)).text();
  expect(html).toContain(pageTexts("pt-BR").chooseHelp);
  expect(html).not.toContain(pageTexts("pt").chooseHelp);
  expect(html).toContain('lang="pt-BR"');
  expect(html).toContain(`€\u00a0${brazil.payment.amount.replace(".", ",")}`);

  const portugal = await sessionFor("app_page", "pt", { merchant_locale: "en", customer: "pt-PT" });
  const page = await (await fetch(portugal.redirectUrl)).text();
  expect(page).toContain(pageTexts("pt").chooseHelp);
  expect(page).not.toContain(pageTexts("pt-BR").chooseHelp);
});

it("the note of a Portuguese-speaking shopper's gateway order is in their own Portuguese, Brazil's or Portugal's", async () => {
  const { services, shopDomain } = stack();
  const notes: string[] = [];
  for (const [suffix, locale] of [["nbr", "pt-BR"], ["npt", "pt-PT"]] as const) {
    const hosted = await sessionFor("gateway", suffix, { merchant_locale: "en", customer: locale });
    const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });
    const info = (await services.gateways.forShop(shop, "sandbox")!.client.orderInfo(hosted.payment.gatewayOrderId!))._unsafeUnwrap();
    expect(info.language).toBe("PT");
    notes.push(info.notes ?? "");
  }
  expect(notes).toEqual([`Pagamento do pedido em ${shopDomain}`, `Pagamento da encomenda em ${shopDomain}`]);
});
