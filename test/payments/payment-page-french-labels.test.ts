// The French payment page writes a label and its value with a space before the colon, as
// French does and as its own texts do ("Le service de paiement indique : {reason}"): what
// arrived after a partial payment ("Reçu : 0,0079 ETH"), and the Copy buttons' names, which a
// screen reader reads ("Copier : Montant restant à envoyer").
import Decimal from "decimal.js";
import { beforeAll, describe, expect, it } from "vitest";
import { checkPaymentNow } from "../../app/payments/check-payment";
import { pageTexts } from "../../app/payment-page/texts";
import { coinPickedOnAppPage, stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
const fr = pageTexts("fr");

beforeAll(async () => {
  stack().logger.info("french labels: started");
  await stack().services.db.shop.update({ where: { shopDomain: stack().shopDomain }, data: { checkoutMode: "app_page" } });
});

function shown(html: string): string {
  return html.replace(/<script\b[\s\S]*?<\/script>/g, "").replace(/<!-- -->/g, "").replaceAll("&#x27;", "'");
}

describe("the French payment page", () => {
  it("puts a space before its colons, as its own texts do", async () => {
    const { pageUrl, payment } = await coinPickedOnAppPage(stack(), { locale: "fr", amount: "40.00", currency: "EUR" });
    const half = new Decimal(payment.cryptoAmount!).div(2).toDecimalPlaces(8).toFixed();
    await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, { action: "pay", amount: half });
    expect((await checkPaymentNow(stack().services, payment.shopId, payment.id)).ok).toBe(true);

    const html = shown(await (await fetch(pageUrl)).text());
    expect(html).toContain(fr.amountStillDue);
    // What arrived, and the Copy button of the amount still due, as French writes them.
    expect(html).not.toContain(`${fr.received}:`);
    expect(html).not.toContain(`${fr.copy}: ${fr.amountStillDue}`);
    expect(html).toContain(`${fr.received} :`);
    expect(html).toContain(`aria-label="${fr.copy} : ${fr.amountStillDue}"`);
  });
});
