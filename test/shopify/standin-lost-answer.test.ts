// A Payments Apps call the app gave up on (its timeout, a connection cut) is carried out all the
// same: Shopify received the whole request, and only the answer is lost. The stand-in's "slow"
// fault plays that case, which the app's retries exist for.
import { afterAll, beforeAll, expect, it } from "vitest";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import { createPaymentsAppsClient } from "~/shopify/payments-apps/client";

const TOKEN = "shpat_standin_lost_answer";
let standin: ShopifyStandin;

beforeAll(async () => {
  standin = await startShopifyStandin({ appUrl: "http://127.0.0.1:9", accessToken: TOKEN });
});

afterAll(async () => {
  await standin?.close();
});

it("carries out a resolve whose answer the app stopped waiting for", async () => {
  const session = standin.state.createPaymentSession();
  const client = createPaymentsAppsClient({ shopDomain: standin.shopDomain, accessToken: TOKEN, endpoint: standin.graphqlEndpoint(), timeoutMs: 200 });
  standin.state.setFault({ mode: "slow", delayMs: 600 });
  const result = await client.resolvePaymentSession(session.gid);
  expect(result.isErr() && result.error.kind).toBe("timeout");
  // Shopify ran the mutation it received; the answer alone was lost.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
  // And the app's retry of the same call then finds it done.
  const again = await client.resolvePaymentSession(session.gid);
  expect(again.isOk() && again.value.state?.code).toBe("RESOLVED");
});
