// Refund, capture and void sessions as Shopify sends them, on SQLite and on PostgreSQL: what
// the app answers (an authorization is captured once, never after a void, and only an
// authorization is), what the payment's page says of it (the amount and currency Shopify
// asked for, the answer queued, then what Shopify did with it), what a refused answer
// leaves (the request failed, a timeline entry naming the call, the payment flagged unless
// another flag is open), and one record and one Shopify call per session id whatever the
// repeats. Sessions Shopify's own rules would not open (the stand-in refuses them) are
// written by hand, as a Shopify retry or a bug on either side could still bring them; Shopify
// does not know them, so it refuses the app's answer to them.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { attentionAdvice } from "../../app/admin/attention";
import { currentFlag, markAttentionHandled, paymentDetail } from "../../app/admin/payments.server";
import { parseGatewayStatus, type ParsedGatewayStatus } from "../../app/gateway/statuses";
import { deliverDueMessages, deliverNow, retryFinalCallNow } from "../../app/payments/outbox";
import { settleFromGatewayOrder, settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { documentedOrder } from "../gateway/support/fixtures";
import { drainOutbox, harnessForFile, operationNames, paymentWithSession, post, SHOP } from "../support/follow-up-routes";
import { paymentColumns } from "../support/payment-rows";
import { ROW_DATABASES } from "../support/row-databases";
import { waitFor } from "../support/stack";

type Kind = "refund" | "capture" | "void";
const GID_TYPE = { refund: "RefundSession", capture: "CaptureSession", void: "VoidSession" } as const;

/** A session body as Shopify sends it, for a session Shopify itself does not hold. */
function body(kind: Kind, paymentId: string, extra: Record<string, unknown> = {}) {
  const id = randomUUID().replace(/-/g, "");
  return {
    id,
    gid: `gid://shopify/${GID_TYPE[kind]}/${id}`,
    payment_id: paymentId,
    ...(kind === "void" ? {} : { amount: "49.90", currency: "EUR" }),
    merchant_locale: "en",
    proposed_at: new Date().toISOString(),
    test: true,
    ...extra,
  };
}

describe.each(ROW_DATABASES)("refund, capture and void sessions on $name", (database) => {
  const h = harnessForFile(database);
  const db = () => h().services.db;
  const message = (gid: string) => db().outboxMessage.findFirstOrThrow({ where: { payload: { contains: gid } } });
  const queued = async (gid: string) => {
    const stored = await message(gid);
    return { kind: stored.kind, payload: JSON.parse(stored.payload) as { merchantMessage?: string } };
  };
  const requestStatus = async (shopifyId: string) => (await db().sessionRequest.findFirstOrThrow({ where: { shopifyId } })).status;
  /** Delivers the answer to one session now, as the worker will once it is due. */
  const deliver = async (gid: string) => {
    const { id } = await message(gid);
    await db().outboxMessage.update({ where: { id }, data: { nextAttemptAt: new Date() } });
    return deliverNow(h().services, id);
  };
  /** The merchant's "Mark as handled" on the flag the payment's page shows now. */
  const handleFlag = async (paymentId: string) => markAttentionHandled(db(), h().shopId, paymentId, await currentFlag(db(), await db().payment.findUniqueOrThrow({ where: { id: paymentId } })), new Date());
  const timeline = async (paymentId: string) => (await paymentDetail(db(), h().shopId, paymentId))!.timeline.map((e) => `${e.title}: ${e.description}`);
  const refusals = async (paymentId: string) =>
    (await db().paymentEvent.findMany({ where: { paymentId, type: "shopify_refused" }, orderBy: { id: "asc" } })).map((event) => JSON.parse(event.detail) as Record<string, unknown>);

  describe("capture", () => {
    it("a second capture of an authorization already captured is refused", async () => {
      const { session } = await paymentWithSession(h());
      const first = await h().standin.state.startFollowUp("capture", session.id);
      expect(await deliver(first.session.gid)).toBe("done");
      expect(h().standin.state.session(first.session.id)?.state.code).toBe("RESOLVED");
      // The same amount again, under a new capture session: the crypto was captured once only.
      const second = body("capture", session.id);
      expect((await post(h(), "capture", second)).status).toBe(201);
      const { kind, payload } = await queued(second.gid);
      expect(kind).toBe("capture.reject");
      expect(payload.merchantMessage).toMatch(/already captured/);
    });

    it("a capture of a sale (not an authorization) is refused", async () => {
      const { session } = await paymentWithSession(h(), { kind: "sale" });
      const request = body("capture", session.id);
      expect((await post(h(), "capture", request)).status).toBe(201);
      const { kind, payload } = await queued(request.gid);
      expect(kind).toBe("capture.reject");
      expect(payload.merchantMessage).toMatch(/not an authorization/);
    });

    it("a capture after the authorization was voided is refused, even if crypto arrived since; the void is on the payment's timeline", async () => {
      const { session, payment } = await paymentWithSession(h(), { state: "awaiting_payment", resolveInShopify: false });
      const voiding = body("void", session.id);
      expect((await post(h(), "void", voiding)).status).toBe(201);
      expect((await queued(voiding.gid)).kind).toBe("void.resolve");
      // The gateway order was left open: the shopper pays after the void.
      await db().payment.update({ where: { id: payment.id }, data: { state: "paid", gatewayStatus: "CO", percentage: "100.0" } });
      const capture = body("capture", session.id);
      expect((await post(h(), "capture", capture)).status).toBe(201);
      const { kind, payload } = await queued(capture.gid);
      expect(kind).toBe("capture.reject");
      expect(payload.merchantMessage).toMatch(/voided/);
      expect(await timeline(payment.id)).toContain("Void requested in Shopify: Shopify asked to void the authorization. The app accepted it and queued its answer for Shopify.");
    });

    it("crypto paid after an accepted void is flagged for a person, once, whether a read or a signed webhook reports it; as is crypto the gateway showed when the void came", async () => {
      const voided = async () => {
        const gatewayOrderId = randomUUID();
        const { session, payment } = await paymentWithSession(h(), { state: "awaiting_payment", resolveInShopify: false, columns: { gatewayOrderId, gatewayStatus: "PE" } });
        const before = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
        const voiding = body("void", session.id);
        expect((await post(h(), "void", voiding)).status).toBe(201);
        expect((await queued(voiding.gid)).kind).toBe("void.resolve");
        // The acceptance is a new version of the row: a settlement decided on the row before it fails its write and decides again.
        expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
        return { gatewayOrderId, payment };
      };
      const flags = async (paymentId: string) => (await db().paymentEvent.findMany({ where: { paymentId, type: "attention" } })).map((e) => (JSON.parse(e.detail) as { reason: string }).reason);

      // A read: the shopper paid the order the void left open.
      const read = await voided();
      const settled = await settleFromGatewayOrder(h().services, read.payment.id, documentedOrder(read.gatewayOrderId, "CO", 1, "2026-11-25T10:00:00Z", read.payment), "reconcile", new Date());
      expect(settled.payment).toMatchObject({ state: "paid", attention: "paid_after_void", attentionResolvedAt: null });
      expect(settled.payment.attentionDetail).toMatch(/^Shopify voided this authorization on .+, and crypto arrived at the gateway since \(status CO\)\. It belongs to the shopper/);
      await settleFromGatewayOrder(h().services, read.payment.id, documentedOrder(read.gatewayOrderId, "CO", 1, "2026-11-25T10:05:00Z", read.payment), "reconcile", new Date());
      expect(await flags(read.payment.id)).toEqual(["paid_after_void"]);
      expect(attentionAdvice("paid_after_void").title).toBe("Crypto for a voided authorization");

      // A signed webhook, which settles from the row the intake read.
      const signed = await voided();
      const row = await db().payment.findUniqueOrThrow({ where: { id: signed.payment.id } });
      const byWebhook = await settleFromSignedWebhook(h().services, { payment: row, shopDomain: SHOP }, { identifier: signed.gatewayOrderId, status: parseGatewayStatus("CM") as Extract<ParsedGatewayStatus, { known: true }> });
      expect(byWebhook?.payment).toMatchObject({ state: "paid", attention: "paid_after_void" });

      // A void while the crypto is on its way (AC): accepted, and flagged at once; its confirmation later flags nothing more.
      const gatewayOrderId = randomUUID();
      const { session, payment } = await paymentWithSession(h(), { state: "confirming", resolveInShopify: false, columns: { gatewayOrderId, gatewayStatus: "AC" } });
      const onItsWay = body("void", session.id);
      expect((await post(h(), "void", onItsWay)).status).toBe(201);
      expect((await queued(onItsWay.gid)).kind).toBe("void.resolve");
      const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(flagged).toMatchObject({ attention: "paid_after_void", attentionResolvedAt: null });
      expect(flagged.attentionDetail).toMatch(/^Shopify voided this authorization on .+, and crypto had already arrived at the gateway for it \(status AC\)\. It belongs to the shopper/);
      const paid = await settleFromGatewayOrder(h().services, payment.id, documentedOrder(gatewayOrderId, "CO", 1, "2026-11-25T10:00:00Z", payment), "reconcile", new Date());
      expect(paid.payment).toMatchObject({ state: "paid", attention: "paid_after_void" });
      expect(await flags(payment.id)).toEqual(["paid_after_void"]);
    });

    it("a capture naming a payment the app has no record of (another shop's included) says so, and leaves that shop's payment untouched", async () => {
      const theirs = await db().payment.create({ data: paymentColumns(h().otherShopId, { state: "paid", kind: "authorization" }) });
      for (const paymentId of [randomUUID(), theirs.shopifyPaymentId]) {
        const request = body("capture", paymentId);
        expect((await post(h(), "capture", request, SHOP)).status).toBe(201);
        const { kind, payload } = await queued(request.gid);
        expect(kind).toBe("capture.reject");
        expect(payload.merchantMessage).toBe("This app has no record of the payment to capture.");
      }
      expect(await db().paymentEvent.count({ where: { paymentId: theirs.id } })).toBe(0);
    });
  });

  it("a refund, capture or void for a shop that uninstalled the app is refused as its payment sessions are (422 shop_not_configured), with nothing recorded or queued", async () => {
    // The uninstall deleted the shop's Shopify token: an answer queued for it could never be delivered.
    const shopDomain = `gone-${randomUUID().slice(0, 8)}.myshopify.com`;
    const shop = await db().shop.create({ data: { shopDomain, webhookToken: randomUUID().replace(/-/g, ""), installedAt: new Date(Date.now() - 60_000), uninstalledAt: new Date() } });
    const payment = await db().payment.create({ data: paymentColumns(shop.id, { state: "paid", kind: "authorization", gatewayOrderId: randomUUID(), gatewayStatus: "CO" }) });
    for (const kind of ["refund", "capture", "void"] as const) {
      const answer = await post(h(), kind, body(kind, payment.shopifyPaymentId), shopDomain);
      expect({ kind, status: answer.status, body: answer.text ? (JSON.parse(answer.text) as unknown) : null }).toEqual({
        kind,
        status: 422,
        body: { error: "shop_not_configured", message: "This shop has uninstalled the app." },
      });
    }
    expect(await db().sessionRequest.count({ where: { shopId: shop.id } })).toBe(0);
    expect(await db().outboxMessage.count({ where: { shopDomain } })).toBe(0);
    expect(await db().paymentEvent.count({ where: { paymentId: payment.id } })).toBe(0);
  });

  it("a request taken before the uninstall, delivered again after it, is answered as the first time (201), with nothing more recorded", async () => {
    const shopDomain = `gone-later-${randomUUID().slice(0, 8)}.myshopify.com`;
    const shop = await db().shop.create({ data: { shopDomain, webhookToken: randomUUID().replace(/-/g, ""), installedAt: new Date(Date.now() - 60_000) } });
    const payment = await db().payment.create({ data: paymentColumns(shop.id, { state: "paid", kind: "sale", gatewayOrderId: randomUUID(), gatewayStatus: "CO" }) });
    const refund = body("refund", payment.shopifyPaymentId);
    expect((await post(h(), "refund", refund, shopDomain)).status).toBe(201);
    await db().shop.update({ where: { id: shop.id }, data: { uninstalledAt: new Date() } });
    const again = await post(h(), "refund", refund, shopDomain);
    expect({ status: again.status, text: again.text }).toEqual({ status: 201, text: "" });
    // Another request of the uninstalled shop is still refused.
    expect((await post(h(), "refund", body("refund", payment.shopifyPaymentId), shopDomain)).status).toBe(422);
    expect(await db().sessionRequest.count({ where: { shopId: shop.id } })).toBe(1);
    expect(await db().outboxMessage.count({ where: { shopDomain } })).toBe(1);
  });

  describe("the payment's page and the request's status", () => {
    it("shows the amount in the currency Shopify asked for", async () => {
      const { session, payment } = await paymentWithSession(h());
      await post(h(), "capture", body("capture", session.id, { amount: "49.90", currency: "USD" }));
      const entry = (await timeline(payment.id)).find((line) => line.startsWith("Capture requested in Shopify"));
      expect(entry).toContain("49.90 USD");
      expect(entry).not.toContain("EUR");
    });

    it("says the answer is queued for Shopify, then what Shopify did with it; the request ends resolved or rejected", async () => {
      const { session, payment } = await paymentWithSession(h());
      const capture = await h().standin.state.startFollowUp("capture", session.id);
      expect(await requestStatus(capture.session.id)).toBe("resolving");
      expect(await timeline(payment.id)).toContain("Capture requested in Shopify: A capture of 49.90 EUR was asked. The app accepted it and queued its answer for Shopify.");
      expect(await deliver(capture.session.gid)).toBe("done");
      expect(await requestStatus(capture.session.id)).toBe("resolved");
      expect((await timeline(payment.id)).at(-1)).toBe("Shopify: capture made: Shopify took the app's answer: the authorization is captured.");

      const refund = await h().standin.state.startFollowUp("refund", session.id);
      expect(await requestStatus(refund.session.id)).toBe("rejecting");
      expect(await deliver(refund.session.gid)).toBe("done");
      expect(await requestStatus(refund.session.id)).toBe("rejected");
      expect((await timeline(payment.id)).at(-1)).toMatch(/^Shopify: refund refused: .*how to return the money instead/);
      expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).attention).toBeNull();
    });

    it("Shopify refusing the app's token: the capture stays open, the timeline says so once and the payment is flagged; once Shopify takes it (Check now), the flag closes", async () => {
      const { session, payment } = await paymentWithSession(h());
      const capture = h().standin.state.createFollowUpSession("capture", session.id);
      expect((await post(h(), "capture", capture.request)).status).toBe(201);
      // A permission withdrawn: every call of the shop's token is refused.
      h().standin.state.setFault({ mode: "http_403", count: 3 });
      for (let attempt = 0; attempt < 3; attempt++) expect(await deliver(capture.gid)).toBe("retry");
      expect(h().standin.state.session(capture.id)?.state.code).toBe("OPEN");
      expect(await requestStatus(capture.id)).toBe("resolving");
      expect(await refusals(payment.id)).toEqual([expect.objectContaining({ call: "capture.resolve", session: capture.gid, retrying: true })]);
      const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(flagged).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
      expect(flagged.attentionDetail).toContain(`Shopify has not taken the app's answer to the capture it asked for (capture session ${capture.id}: the app accepted it).`);
      expect(flagged.attentionDetail).toContain("HTTP 403");
      const lines = await timeline(payment.id);
      expect(lines).toContainEqual(expect.stringMatching(/^Shopify refused the app's answer to a capture: .*the capture stays open in Shopify/));
      expect(lines.some((line) => line.startsWith("Shopify: capture made"))).toBe(false);

      // The merchant grants the permission and presses Check now: the answer goes at once.
      expect(await db().outboxMessage.count({ where: { payload: { contains: capture.gid }, nextAttemptAt: { gt: new Date() } } })).toBe(1);
      await retryFinalCallNow(h().services, payment.id);
      expect(h().standin.state.session(capture.id)?.state.code).toBe("RESOLVED");
      expect(await requestStatus(capture.id)).toBe("resolved");
      const delivered = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(delivered.attention).toBe("shopify_error");
      expect(delivered.attentionResolvedAt).not.toBeNull();
      expect((await timeline(payment.id)).at(-1)).toMatch(/^Shopify: capture made/);
    });

    it("Shopify refusing the answer for good: the request failed, the payment flagged with Shopify's words, and a new capture can still be made", async () => {
      const { session, payment } = await paymentWithSession(h());
      // A capture session Shopify does not hold: it refuses the app's answer as not found.
      const unknown = body("capture", session.id);
      expect((await post(h(), "capture", unknown)).status).toBe(201);
      expect(await deliver(unknown.gid)).toBe("failed");
      expect(await requestStatus(unknown.id)).toBe("failed");
      expect(await refusals(payment.id)).toEqual([{ call: "capture.resolve", session: unknown.gid, message: expect.stringContaining("not found"), flagged: true }]);
      const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(flagged).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
      expect(flagged.attentionDetail).toMatch(/^Shopify has not taken the app's answer to the capture it asked for .*Shopify does not know this capture session\. .*not found\. Check the capture in Shopify\.$/);
      expect((await timeline(payment.id)).at(-1)).toMatch(/^Shopify refused the app's answer to a capture: .*check the capture in Shopify\. .*not found/);

      // Nothing was captured: Shopify's own capture session is answered as usual.
      const capture = await h().standin.state.startFollowUp("capture", session.id);
      expect((await queued(capture.session.gid)).kind).toBe("capture.resolve");
    });

    it("refused while retried, then for good: the call's own flag takes Shopify's last words", async () => {
      const { session, payment } = await paymentWithSession(h());
      const unknown = body("capture", session.id);
      expect((await post(h(), "capture", unknown)).status).toBe(201);
      h().standin.state.setFault({ mode: "http_403", count: 1 });
      expect(await deliver(unknown.gid)).toBe("retry");
      expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).attentionDetail).toContain("the app keeps trying, at most 10 minutes apart");
      expect(await deliver(unknown.gid)).toBe("failed");
      const flagged = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(flagged).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
      expect(flagged.attentionDetail).toMatch(/Shopify does not know this capture session\. .*Check the capture in Shopify\.$/);
      expect(await refusals(payment.id)).toEqual([expect.objectContaining({ retrying: true }), expect.not.objectContaining({ retrying: true })]);
    });

    it("a refused answer's own flag, marked handled, stays handled, and is not raised again when a later flag is handled", async () => {
      const { session, payment } = await paymentWithSession(h());
      const unknown = body("capture", session.id);
      expect((await post(h(), "capture", unknown)).status).toBe(201);
      expect(await deliver(unknown.gid)).toBe("failed");
      expect(await handleFlag(payment.id)).toBe("handled");
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: expect.any(Date) });
      // Another flag, raised and handled later, does not bring the refusal back either.
      await db().payment.update({ where: { id: payment.id }, data: { attention: "overpaid", attentionDetail: "Paid 120 %.", attentionResolvedAt: null } });
      expect(await handleFlag(payment.id)).toBe("handled");
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "overpaid", attentionResolvedAt: expect.any(Date) });
    });

    it("a flag raised while the answer is retried, marked handled, stays handled", async () => {
      const { session, payment } = await paymentWithSession(h());
      const capture = h().standin.state.createFollowUpSession("capture", session.id);
      expect((await post(h(), "capture", capture.request)).status).toBe(201);
      h().standin.state.setFault({ mode: "http_403", count: 1 });
      expect(await deliver(capture.gid)).toBe("retry");
      expect(await handleFlag(payment.id)).toBe("handled");
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: expect.any(Date) });
    });

    /** A paid authorization flagged overpaid, and a capture answer Shopify refuses for good (a session it does not hold). */
    const captureRefusedWhileOverpaid = async () => {
      const { session, payment } = await paymentWithSession(h());
      await db().payment.update({ where: { id: payment.id }, data: { attention: "overpaid", attentionDetail: "Paid 120 %." } });
      const unknown = body("capture", session.id);
      expect((await post(h(), "capture", unknown)).status).toBe(201);
      expect(await deliver(unknown.gid)).toBe("failed");
      return { session, payment, unknown };
    };

    it("a refused answer leaves another open flag as it is, and is told on the timeline", async () => {
      const { payment, unknown } = await captureRefusedWhileOverpaid();
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "overpaid", attentionDetail: "Paid 120 %.", attentionResolvedAt: null });
      expect(await refusals(payment.id)).toEqual([expect.objectContaining({ call: "capture.resolve", session: unknown.gid, flagged: false })]);

      // The merchant sees to the overpayment and marks it handled: the capture Shopify refused,
      // which that flag kept from being raised, is flagged now, with Shopify's words.
      expect(await handleFlag(payment.id)).toBe("handled");
      const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(after).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
      expect(after.attentionDetail).toMatch(/^Shopify has not taken the app's answer to the capture it asked for .*not found.*Check the capture in Shopify\.$/);
      // Handled in turn, it stays handled: nothing is raised twice.
      expect(await handleFlag(payment.id)).toBe("handled");
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: expect.any(Date) });
    });

    /** A paid authorization flagged overpaid, and a capture answer Shopify refuses (HTTP 403, `refusals` times) and the app retries, delivered once. */
    const captureRetriedWhileOverpaid = async (refusals: number) => {
      const { session, payment } = await paymentWithSession(h());
      await db().payment.update({ where: { id: payment.id }, data: { attention: "overpaid", attentionDetail: "Paid 120 %." } });
      const capture = h().standin.state.createFollowUpSession("capture", session.id);
      expect((await post(h(), "capture", capture.request)).status).toBe(201);
      h().standin.state.setFault({ mode: "http_403", count: refusals });
      expect(await deliver(capture.gid)).toBe("retry");
      return { payment, capture };
    };

    it("an answer refused while retried (a permission withdrawn), kept from its flag by another, is flagged once that flag is handled; not once it was taken", async () => {
      const { payment, capture } = await captureRetriedWhileOverpaid(2);
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "overpaid", attentionResolvedAt: null });

      // The merchant sees to the overpayment: the capture still waiting on Shopify is flagged now.
      expect(await handleFlag(payment.id)).toBe("handled");
      const after = await db().payment.findUniqueOrThrow({ where: { id: payment.id } });
      expect(after).toMatchObject({ attention: "shopify_error", attentionResolvedAt: null });
      expect(after.attentionDetail).toContain(`Shopify has not taken the app's answer to the capture it asked for (capture session ${capture.id}: the app accepted it). Shopify refused the call, so the capture stays open in Shopify; the app keeps trying, at most 10 minutes apart.`);
      expect(after.attentionDetail).toContain("HTTP 403");
      // Refused once more, then taken: the flag closes, and handling it raises nothing again.
      expect(await deliver(capture.gid)).toBe("retry");
      expect(await deliver(capture.gid)).toBe("done");
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "shopify_error", attentionResolvedAt: expect.any(Date) });
    });

    it("an answer refused while retried, kept from its flag by another, is not raised once Shopify took it", async () => {
      const { payment, capture } = await captureRetriedWhileOverpaid(1);
      expect(await deliver(capture.gid)).toBe("done");
      expect(await handleFlag(payment.id)).toBe("handled");
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "overpaid", attentionResolvedAt: expect.any(Date) });
    });

    it("a refused answer kept from its flag by another is not raised once a later answer of the same kind was taken", async () => {
      const { session, payment } = await captureRefusedWhileOverpaid();
      // Shopify's own capture session, answered and taken.
      const capture = await h().standin.state.startFollowUp("capture", session.id);
      expect(capture.delivery.status).toBe(201);
      await drainOutbox(h());
      expect(await handleFlag(payment.id)).toBe("handled");
      expect(await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).toMatchObject({ attention: "overpaid", attentionResolvedAt: expect.any(Date) });
    });
  });

  describe("the same session delivered again", () => {
    const stored = async (shopifyId: string) => ({
      requests: await db().sessionRequest.count({ where: { shopifyId } }),
      messages: await db().outboxMessage.count({ where: { kind: { startsWith: "capture." }, payload: { contains: shopifyId } } }),
    });

    it("six times at once: every answer 201 and empty, one record, one event, one call", async () => {
      const { session, payment } = await paymentWithSession(h());
      const capture = h().standin.state.createFollowUpSession("capture", session.id);
      const answers = await Promise.all(Array.from({ length: 6 }, () => post(h(), "capture", capture.request)));
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
      expect(answers.every((a) => a.text === "")).toBe(true);
      expect(await stored(capture.id)).toEqual({ requests: 1, messages: 1 });
      expect(await db().paymentEvent.count({ where: { paymentId: payment.id, type: "capture_requested" } })).toBe(1);
      await drainOutbox(h());
      expect(operationNames(h(), capture.id)).toEqual(["CaptureSessionResolve"]);
    });

    it("with another body under the same id: answered as the first was, nothing changed", async () => {
      const { session } = await paymentWithSession(h());
      const capture = h().standin.state.createFollowUpSession("capture", session.id);
      expect((await post(h(), "capture", capture.request)).status).toBe(201);
      expect((await post(h(), "capture", { ...capture.request, amount: "1.00" })).status).toBe(201);
      expect(await stored(capture.id)).toEqual({ requests: 1, messages: 1 });
      expect((await message(capture.id)).kind).toBe("capture.resolve");
    });

    it("after the app restarted: recognised, and the stored answer is delivered once", async () => {
      const { session } = await paymentWithSession(h());
      const capture = h().standin.state.createFollowUpSession("capture", session.id);
      expect((await post(h(), "capture", capture.request)).status).toBe(201);
      await h().restart();
      expect((await post(h(), "capture", capture.request)).status).toBe(201);
      await drainOutbox(h());
      expect(await stored(capture.id)).toEqual({ requests: 1, messages: 1 });
      expect(operationNames(h(), capture.id)).toEqual(["CaptureSessionResolve"]);
    });

    it("while Shopify's API fails (HTTP 500 twice): the answer reaches Shopify exactly once, and a passing failure flags nothing", async () => {
      const { session, payment } = await paymentWithSession(h());
      // Nothing else is waiting to go out: the two failures are this capture's.
      await drainOutbox(h());
      const capture = h().standin.state.createFollowUpSession("capture", session.id);
      h().standin.state.setFault({ mode: "http_500", count: 2 });
      expect((await post(h(), "capture", capture.request)).status).toBe(201);
      await waitFor(async () => {
        await deliverDueMessages(h().services, { worker: "retrying" });
        return h().standin.state.session(capture.id)?.state.code === "RESOLVED";
      }, "the capture resolved after Shopify recovered", 20_000);
      h().standin.state.clearFaults();
      const answered = h().standin.state.operationsFor(capture.id).filter((op) => op.operationName === "CaptureSessionResolve" && op.fault === null);
      expect(answered).toHaveLength(1);
      expect((await message(capture.id)).status).toBe("done");
      expect(await requestStatus(capture.id)).toBe("resolved");
      expect(await refusals(payment.id)).toEqual([]);
      expect((await db().payment.findUniqueOrThrow({ where: { id: payment.id } })).attention).toBeNull();
    });
  });
});
