// The app dies between storing a webhook and processing it: after a restart on the same
// database the stored webhook is processed and the payment settles.
import { expect, it } from "vitest";
import { stackForFile, waitFor } from "../support/stack";

const stack = stackForFile({ workers: false });

it("a webhook stored before a crash is processed after the restart", async () => {
  const { session } = await stack().standin.state.startPayment({ test: true });
  const payment = await stack().services.db.payment.findFirstOrThrow({ where: { shopifyPaymentId: session.id } });
  const act = (body: Record<string, unknown>) => stack().sandboxControl(`/sandbox/orders/${payment.gatewayOrderId}/actions`, body);
  await act({ action: "choose_currency", currency: "BTC" });
  await act({ action: "pay", amount: "exact" });
  await act({ action: "confirm" });

  // Acknowledged (stored) but never processed: no worker is running.
  await waitFor(async () => (await stack().services.db.gatewayWebhook.count({ where: { orderId: payment.gatewayOrderId, status: "CO" } })) === 1, "the CO webhook stored");
  expect(await stack().services.db.gatewayWebhook.count({ where: { processedAt: { not: null } } })).toBe(0);
  expect(stack().standin.state.session(session.id)?.state.code).toBe("OPEN");

  await stack().restartApp({ workers: true });

  await waitFor(async () => stack().standin.state.session(session.id)?.state.code === "RESOLVED", "resolve after restart");
  const after = await stack().services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  expect(after.state).toBe("paid");
  expect(await stack().services.db.gatewayWebhook.count({ where: { processedAt: null } })).toBe(0);
  expect(stack().standin.state.operationsFor(session.id).filter((op) => op.operationName === "PaymentSessionResolve")).toHaveLength(1);
});
