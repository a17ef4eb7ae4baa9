// Every stack's close() fails when the app sent a Payments Apps operation the real schema
// refuses. The stand-in answers such an operation as Shopify does (HTTP 200 with errors), which
// the app's outbox takes as a lasting failure and retries, so without this check a flow test
// whose own assertions do not read invalidOperations() would pass over it.
import { expect, it } from "vitest";
import { startStack } from "../support/stack";

it("a stack whose app sent an operation the schema refuses does not close cleanly", async () => {
  const stack = await startStack();
  let closed = false;
  try {
    // Stands for a regression in one of the app's documents or variables (a misspelt field, a
    // reason code out of the enum): sent the way the app's client sends, with the shop's token.
    const session = stack.standin.state.createPaymentSession();
    const response = await fetch(stack.standin.graphqlEndpoint(), {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Shopify-Access-Token": stack.standin.accessToken },
      body: JSON.stringify({
        query: `mutation PaymentSessionReject($id: ID!, $reason: PaymentSessionRejectionReasonInput!) {
          paymentSessionReject(id: $id, reason: $reason) { paymentSession { id } userErrors { field message } }
        }`,
        variables: { id: session.gid, reason: { code: "EXPIRED", merchantMessage: "x" } },
        operationName: "PaymentSessionReject",
      }),
    });
    expect(response.status).toBe(200);
    expect(stack.standin.state.invalidOperations()).toHaveLength(1);
    closed = true;
    await expect(stack.close()).rejects.toThrow(/invalid|schema/i);
  } finally {
    if (!closed) await stack.close().catch(() => undefined);
  }
}, 90_000);
