// A capture of an authorization that a signed notification alone marked paid: before deciding,
// the app reads the order from the gateway (the sandbox, over HTTP), and captures once the
// gateway's own record backs the notification, rather than refusing until the reconciler's
// next listing has read it.
import { beforeAll, expect, it } from "vitest";
import { parseGatewayStatus, type ParsedGatewayStatus } from "../../app/gateway/statuses";
import { deliverDueMessages } from "../../app/payments/outbox";
import { settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { PAID_IN_FULL, stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
beforeAll(() => stack().logger.info("capture confirmed first: started"));

/** An authorization paid at the gateway, settled on its signed CO notification alone (no read yet), and resolved in Shopify. */
async function paidOnSignedCompletion() {
  const { services, standin } = stack();
  const { session, delivery } = await standin.state.startPayment({ test: true, kind: "authorization" });
  expect(delivery.status).toBe(200);
  const payment = await services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  for (const action of PAID_IN_FULL) await stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId!}/actions`, action);

  // The CO notification settles the payment on its own word (no read yet); Shopify is told.
  const row = await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  const signed = await settleFromSignedWebhook(services, { payment: row, shopDomain: stack().shopDomain }, {
    identifier: payment.gatewayOrderId!,
    status: parseGatewayStatus("CO") as Extract<ParsedGatewayStatus, { known: true }>,
  });
  expect(signed?.payment).toMatchObject({ state: "paid", unverifiedSince: expect.any(Date) });
  await deliverDueMessages(services, { worker: "test" });
  expect(standin.state.session(session.id)?.state.code).toBe("RESOLVED");
  return { session, payment };
}

it("reads the order first and captures the authorization, the gateway's record backing the notification", async () => {
  const { services, standin } = stack();
  const { session, payment } = await paidOnSignedCompletion();

  const capture = await standin.state.startFollowUp("capture", session.id);
  expect(capture.delivery.status).toBe(201);
  // The capture's read backed the notification.
  expect(await services.db.payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ state: "paid", unverifiedSince: null, attention: null });
  expect(await services.db.paymentEvent.count({ where: { paymentId: payment.id, type: "verified" } })).toBe(1);
  await deliverDueMessages(services, { worker: "test" });
  expect(standin.state.session(capture.session.id)?.state.code).toBe("RESOLVED");
}, 60_000);

it("a capture Shopify delivers again is answered as the first time without reading the order again: repeats spend none of the device's quota", async () => {
  const { services, standin } = stack();
  const { session } = await paidOnSignedCompletion();

  // The gateway cannot be read: the capture is decided without its record, and stays decided.
  for (const endpoint of ["orders.info", "orders.list"]) await stack().sandboxControl("/sandbox/faults", { endpoint, kind: "http_500", count: 100 });
  try {
    const capture = await standin.state.startFollowUp("capture", session.id);
    expect(capture.delivery.status).toBe(201);
    const calls = () => services.db.gatewayCall.count();
    const afterFirst = await calls();
    for (let i = 0; i < 3; i++) expect((await standin.state.redeliverFollowUp(capture.session.id)).delivery.status).toBe(201);
    expect(await calls()).toBe(afterFirst);
    expect(await services.db.sessionRequest.count({ where: { shopifyId: capture.session.id } })).toBe(1);
  } finally {
    await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
  }
}, 60_000);
