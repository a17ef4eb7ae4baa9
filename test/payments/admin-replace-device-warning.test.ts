// Connecting another device while payments are in progress on the current device AND on the
// device before it (whose credentials are kept, retired): the connection deletes the earlier
// device's credentials, so its payments' notifications are refused from then on. The page
// says so before the merchant presses Connect or "Reconnect the gateway sandbox", as the
// removal's question does, and says nothing when nothing would be deleted.
import { beforeAll, describe, expect, it } from "vitest";
import { connectSandbox } from "../../app/shops/onboarding.server";
import { getAdminPage, postAdminForm } from "../support/admin-pages";
import { paymentThrough, stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
// The stack checks its log for secrets when it closes: these pages alone may write no line.
beforeAll(() => stack().logger.info("admin replace device warning: started"));

const db = () => stack().services.db;
const shopRow = () => db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });

/** A payment in progress: its order made, the coin chosen, nothing paid yet. */
const pendingPayment = async () => (await paymentThrough(stack(), [{ action: "choose_currency", currency: "BTC" }])).payment;

describe("replacing a device while the one before it still has payments in progress", () => {
  it("warns before the connection, as the removal does, that the earlier device's credentials will be deleted", async () => {
    // A payment on device A: connecting another keeps A's credentials, and deletes none.
    await pendingPayment();
    const a = await shopRow();
    expect((await getAdminPage(stack(), "/app/onboarding")).text).not.toMatch(/will be deleted/);
    // Device B connected in its place (A kept, retired); a payment on B.
    expect(await connectSandbox(stack().services, stack().shopDomain)).toMatchObject({ ok: true });
    expect((await shopRow()).sandboxRetiredDeviceKeyEnc).toBe(a.sandboxDeviceKeyEnc);
    await pendingPayment();

    const page = await getAdminPage(stack(), "/app/onboarding");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Reconnect the gateway sandbox");
    // The page the merchant presses "Reconnect" (or "Connect") on must say what it will cost.
    const warnedBefore = /will be deleted|deleted to make room/i.test(page.text);

    // One press: no question asked, and A's credentials are gone.
    const answer = await postAdminForm(stack(), "/app/onboarding", { intent: "connect_sandbox" });
    expect(answer.status).toBe(200);
    const after = await shopRow();
    expect(after.sandboxRetiredDeviceKeyEnc).not.toBe(a.sandboxDeviceKeyEnc);
    expect(after.sandboxDeviceKeyEnc).not.toBe(a.sandboxDeviceKeyEnc);
    expect(answer.text).toContain("were deleted to make room");

    expect(warnedBefore).toBe(true);
  }, 60_000);
});
