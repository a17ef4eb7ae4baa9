// The follow-up session routes (refund, capture, void) served as the server mounts them
// (server/api-router.ts) on a real database (SQLite or PostgreSQL), with the Shopify stand-in
// both sending the sessions and answering the app's Payments Apps calls. No gateway is needed:
// payments are stored as rows, and their Shopify payment sessions are resolved through the
// app's own Payments Apps client, as the outbox would.
import { randomBytes, randomUUID } from "node:crypto";
import http from "node:http";
import express from "express";
import { parseEnv } from "../../app/config/env.server";
import { openAppDatabase } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createLogger } from "../../app/lib/logger.server";
import { parseGatewayStatus, type ParsedGatewayStatus } from "../../app/gateway/statuses";
import { deliverDueMessages } from "../../app/payments/outbox";
import { settleFromSignedWebhook } from "../../app/payments/settle-payment";
import { createServices, type AppServices } from "../../app/services.server";
import { offlineSessionId } from "../../app/shops/shopify-directory.server";
import { startShopifyStandin, type ShopifyStandin } from "../../dev/shopify-standin/server";
import type { Prisma } from "../../generated/prisma/sqlite/client";
import { apiRouter } from "../../server/api-router";
import { forThisFile } from "./for-this-file";
import { paymentColumns } from "./payment-rows";
import type { RowDatabase } from "./row-databases";
import { onFreePort } from "./free-port";
import { TEST_SHOP } from "./stack";

export const SHOP = TEST_SHOP;
export const OTHER_SHOP = "other-shop.myshopify.com";

export interface Harness {
  services: AppServices;
  standin: ShopifyStandin;
  origin: string;
  shopId: string;
  otherShopId: string;
  lines: string[];
  restart(): Promise<void>;
}

export function harnessForFile(database: RowDatabase): () => Harness {
  const started = forThisFile(
    `the ${database.name} follow-up harness`,
    async () => {
      const { url, drop } = await database.open();
      await applyMigrations(url);
      const lines: string[] = [];
      const listen = async (s: AppServices, port: number) => {
        const app = express();
        app.use(apiRouter(s));
        const server = http.createServer(app);
        await new Promise<void>((resolve, reject) => {
          server.once("error", reject);
          server.listen(port, "127.0.0.1", resolve);
        });
        return server;
      };
      // The app's URL is in the stand-in's configuration, so its port is chosen first; a port
      // another file drew in the same moment is given up for a new one.
      const started = await onFreePort(async (port) => {
        const appUrl = `http://127.0.0.1:${port}`;
        const standin = await startShopifyStandin({ port: 0, host: "127.0.0.1", appUrl, shopDomain: SHOP });
        const env = parseEnv({
          NODE_ENV: "test",
          DATABASE_URL: url,
          SHOPIFY_APP_URL: appUrl,
          SHOPIFY_PAYMENTS_APPS_ENDPOINT: `${standin.origin}/{shop}/payments_apps/api/{version}/graphql.json`,
        });
        const open = () => {
          const { db, sql } = openAppDatabase(url);
          return createServices(env, { db, sql, logger: createLogger({ level: "debug", sink: (line) => lines.push(line) }) });
        };
        const services = open();
        try {
          return { port, appUrl, standin, open, services, server: await listen(services, port) };
        } catch (error) {
          await services.db.$disconnect();
          await standin.close();
          throw error;
        }
      });
      const { port, appUrl, standin, open } = started;
      let { services, server } = started;
      const token = () => randomBytes(12).toString("hex");
      const shopId = (await services.db.shop.create({ data: { shopDomain: SHOP, webhookToken: token(), installedAt: new Date() } })).id;
      const otherShopId = (await services.db.shop.create({ data: { shopDomain: OTHER_SHOP, webhookToken: token(), installedAt: new Date() } })).id;
      await services.db.session.create({
        data: { id: offlineSessionId(SHOP), shop: SHOP, state: "installed", isOnline: false, accessToken: standin.accessToken, scope: "write_payment_gateways,write_payment_sessions" },
      });
      const harness: Harness = {
        get services() {
          return services;
        },
        standin,
        origin: appUrl,
        shopId,
        otherShopId,
        lines,
        async restart() {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeAllConnections();
          await closed;
          await new Promise((resolve) => setTimeout(resolve, 50));
          await services.db.$disconnect();
          services = open();
          server = await listen(services, port);
        },
      };
      return { harness, drop, close: async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await services.db.$disconnect();
        await standin.close();
        await drop();
      } };
    },
    async (started) => started.close(),
    60_000,
  );
  return () => started().harness;
}

/** A Shopify payment session (authorization unless told), stored in the app as a payment in `state`, and resolved in Shopify when paid. */
export async function paymentWithSession(
  h: Harness,
  options: { kind?: "sale" | "authorization"; state?: string; resolveInShopify?: boolean; columns?: Partial<Prisma.PaymentUncheckedCreateInput> } = {},
) {
  const session = h.standin.state.createPaymentSession({ test: true, kind: options.kind ?? "authorization" });
  const state = options.state ?? "paid";
  const payment = await h.services.db.payment.create({
    data: paymentColumns(h.shopId, {
      shopifyPaymentId: session.id,
      gid: session.gid,
      groupId: session.group,
      amount: session.request.amount,
      currency: session.request.currency,
      kind: session.request.kind,
      state,
      ...(state === "paid" ? { gatewayOrderId: randomUUID(), gatewayStatus: "CO", percentage: "100.0" } : {}),
      ...options.columns,
    }),
  });
  if (options.resolveInShopify ?? state === "paid") {
    const client = await h.services.shopify.forShop(SHOP);
    const result = await client!.resolvePaymentSession(session.gid);
    if (result.isErr()) throw new Error(`resolve failed: ${JSON.stringify(result.error)}`);
    await h.services.db.payment.update({ where: { id: payment.id }, data: { shopifyOutcome: "resolved", shopifyState: "RESOLVED" } });
  }
  return { session, payment };
}

/**
 * A payment (an authorization unless told) that a signed CO notification marked paid, with no
 * read of the gateway's record yet, its resolve delivered to Shopify: the payment as settled,
 * its gateway order and Shopify's session. Throws when either step does not happen.
 */
export async function paidOnSignedNotification(h: Harness, kind: "sale" | "authorization" = "authorization") {
  const gatewayOrderId = randomUUID();
  const { session, payment } = await paymentWithSession(h, { kind, state: "awaiting_payment", resolveInShopify: false, columns: { gatewayOrderId, gatewayStatus: "PE" } });
  const row = await h.services.db.payment.findUniqueOrThrow({ where: { id: payment.id } });
  const status = parseGatewayStatus("CO") as Extract<ParsedGatewayStatus, { known: true }>;
  const signed = await settleFromSignedWebhook(h.services, { payment: row, shopDomain: SHOP }, { identifier: gatewayOrderId, status });
  if (signed?.payment.state !== "paid" || signed.payment.unverifiedSince === null) throw new Error("the signed CO notification did not settle the payment unverified");
  await drainOutbox(h);
  if (h.standin.state.session(session.id)?.state.code !== "RESOLVED") throw new Error("Shopify's session was not resolved");
  return { session, payment: signed.payment, gatewayOrderId };
}

/**
 * Shopify asks the app to capture the payment of `sessionId`: the capture session, and the
 * app's answer queued for Shopify (its call, capture.resolve or capture.reject, and the
 * merchant's message of a refusal). Throws when the request is not taken (201).
 */
export async function askedToCapture(h: Harness, sessionId: string) {
  const capture = await h.standin.state.startFollowUp("capture", sessionId);
  if (capture.delivery.status !== 201) throw new Error(`the capture session was answered ${capture.delivery.status}`);
  const queued = await h.services.db.outboxMessage.findFirstOrThrow({ where: { payload: { contains: capture.session.gid } } });
  return { session: capture.session, kind: queued.kind, merchantMessage: (JSON.parse(queued.payload) as { merchantMessage?: string }).merchantMessage ?? "" };
}

export function headers(shopDomain = SHOP): Record<string, string> {
  return { "content-type": "application/json", "shopify-shop-domain": shopDomain, "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" };
}

/** POSTs a follow-up session body to the app as Shopify does. */
export async function post(h: Harness, kind: "refund" | "capture" | "void", body: unknown, shopDomain = SHOP) {
  const response = await fetch(`${h.origin}/payments/${kind}`, { method: "POST", headers: headers(shopDomain), body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
}

/** Runs outbox passes until nothing is due. */
export async function drainOutbox(h: Harness): Promise<void> {
  for (let pass = 0; pass < 10; pass++) {
    const counts = await deliverDueMessages(h.services, { worker: `drain-${pass}` });
    if (counts.done + counts.failed + counts.retry + counts.skipped === 0) return;
  }
}

export const operationNames = (h: Harness, idOrGid: string) => h.standin.state.operationsFor(idOrGid).map((op) => op.operationName);
