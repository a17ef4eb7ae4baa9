// Rolling deploy, the instance being replaced: the orchestrator sends SIGTERM (server/main.ts
// calls close()) as it starts taking the instance out of the load balancer, which takes a few
// seconds (health checks failing, endpoints propagating), and the balancer sends it new
// connections until then. For SHUTDOWN_GRACE_MS the instance still serves everything, its
// /healthz answering 503, so a gateway notification sent in that window is stored (the gateway
// never sends one again); then it stops taking connections and drains.
import { expect, it } from "vitest";
import { paymentThrough, stackForFile, waitFor } from "../support/stack";

const GRACE_MS = 3_000;
const stack = stackForFile({ workers: false, env: { SHUTDOWN_GRACE_MS: String(GRACE_MS) } });

async function statusOrError(url: string): Promise<number | string> {
  try {
    const response = await fetch(url);
    await response.body?.cancel();
    return response.status;
  } catch (error) {
    return (error as { cause?: { code?: string } }).cause?.code ?? String(error);
  }
}

it("during the shutdown grace /healthz answers 503 and a gateway notification is stored; after it the instance takes no connections", async () => {
  const { orderId } = await paymentThrough(stack(), [{ action: "choose_currency", currency: "ETH" }]);
  const app = stack().app;
  expect(await statusOrError(`${app.url}/healthz`)).toBe(200);

  const closing = app.close();
  const health = await statusOrError(`${app.url}/healthz`);
  // The shopper pays while the load balancer is still taking the instance out.
  await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "pay", amount: "exact" });
  await stack().sandboxControl(`/sandbox/orders/${orderId}/actions`, { action: "confirm" });
  const delivery = await waitFor(async () => {
    const deliveries = (await stack().sandboxControl(`/sandbox/webhooks/deliveries?order=${orderId}`, undefined, "GET")) as { status: string; ok: boolean; status_code: number | null; error: string | null }[];
    return deliveries.find((d) => d.status === "CO");
  }, "the gateway's CO notification sent");
  const stored = await stack().services.db.gatewayWebhook.count({ where: { orderId, status: "CO" } });

  await closing;
  const afterwards = await statusOrError(`${app.url}/healthz`);
  await stack().restartApp({ workers: false });

  expect({ health, notification: delivery.ok ? delivery.status_code : delivery.error, stored, afterwards }).toEqual({ health: 503, notification: 200, stored: 1, afterwards: "ECONNREFUSED" });
}, 30_000);
