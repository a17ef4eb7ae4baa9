// The stand-in refuses a call whose token lacks the mutation's access scope, as Shopify does
// (HTTP 403, before running any of it): session mutations need write_payment_sessions,
// paymentsAppConfigure needs write_payment_gateways.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import { createPaymentsAppsClient } from "~/shopify/payments-apps/client";

const TOKEN = "shpat_standin_scopes";
let gatewaysOnly: ShopifyStandin;
let sessionsOnly: ShopifyStandin;

beforeAll(async () => {
  gatewaysOnly = await startShopifyStandin({ appUrl: "http://127.0.0.1:9", accessToken: TOKEN, scope: "write_payment_gateways" });
  sessionsOnly = await startShopifyStandin({ appUrl: "http://127.0.0.1:9", accessToken: TOKEN, scope: "write_payment_sessions" });
});

afterAll(async () => {
  await gatewaysOnly?.close();
  await sessionsOnly?.close();
});

const clientOf = (standin: ShopifyStandin) =>
  createPaymentsAppsClient({ shopDomain: standin.shopDomain, accessToken: TOKEN, endpoint: standin.graphqlEndpoint() });

it("refuses a payment session resolve with 403 when the token lacks write_payment_sessions, and leaves the session open", async () => {
  const session = gatewaysOnly.state.createPaymentSession();
  const result = await clientOf(gatewaysOnly).resolvePaymentSession(session.gid);
  expect(result.isErr() ? result.error.kind : `executed: ${JSON.stringify(result._unsafeUnwrap().state)}`).toBe("unauthorized");
  expect(gatewaysOnly.state.session(session.id)?.state.code).toBe("OPEN");
});

it("refuses paymentsAppConfigure with 403 when the token lacks write_payment_gateways", async () => {
  const result = await clientOf(sessionsOnly).configurePaymentsApp({ externalHandle: "device", ready: true });
  expect(result.isErr() ? result.error.kind : "executed").toBe("unauthorized");
  expect(sessionsOnly.state.configuration()).toBeNull();
});
