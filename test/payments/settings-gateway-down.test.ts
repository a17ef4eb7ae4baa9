// The settings page lists the gateway's coins while the merchant waits: with the gateway
// failing, a load makes one short attempt, and the loads just after it make none, instead of
// each waiting out the gateway client's whole retry budget.
import { expect, it } from "vitest";
import { settingsView } from "../../app/admin/settings.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

const faultsLeft = async () => {
  const view = (await stack().sandboxControl("/sandbox/faults", undefined, "GET")) as { faults: { endpoint: string; remaining: number }[] };
  return view.faults.filter((f) => f.endpoint === "currencies").reduce((sum, f) => sum + f.remaining, 0);
};

it("with the gateway answering 500, the page says the coins cannot be listed after one attempt, and the next loads do not ask again at once", async () => {
  const { services, shopDomain } = stack();
  await stack().sandboxControl("/sandbox/faults", { endpoint: "currencies", kind: "http_500", count: 20 });
  const shop = await services.db.shop.findUniqueOrThrow({ where: { shopDomain } });

  const first = await settingsView(services, shop);
  expect(first.sandbox).toMatchObject({ connected: true, unreadable: false, coins: null });
  expect(await faultsLeft()).toBe(19);

  const again = await settingsView(services, shop);
  expect(again.sandbox.coins).toBeNull();
  expect(await faultsLeft()).toBe(19);
  await stack().sandboxControl("/sandbox/faults", undefined, "DELETE");
}, 30_000);
