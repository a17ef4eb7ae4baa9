// The machine-facing API as the server mounts it (server/api-router.ts), on a real database:
// methods other than POST, a handler that fails, and a refused body that leaves the
// connection usable.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { afterAll, beforeAll, expect, it } from "vitest";
import { API_ROUTES } from "../../app/api/api-routes.server";
import { parseEnv } from "../../app/config/env.server";
import { openAppDatabase } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { createLogger } from "../../app/lib/logger.server";
import { createServices, type AppServices } from "../../app/services.server";
import { apiRouter } from "../../server/api-router";

const lines: string[] = [];
let failing = false;
let dir: string;
let services: AppServices;
let server: http.Server;
let origin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "api-router-"));
  const url = `file:${join(dir, "app.db")}`;
  await applyMigrations(url);
  const { db, sql: real } = openAppDatabase(url);
  const fail = () => Promise.reject(new Error("the database went away"));
  // The real statements, unless the test has the database fail.
  const sql: PlainSql = {
    kind: "sqlite",
    execute: (statement) => (failing ? fail() : real.execute(statement)),
    query: (statement) => (failing ? fail() : real.query(statement)),
    executeInTransaction: (statements) => (failing ? fail() : real.executeInTransaction(statements)),
    inTransaction: (work) => (failing ? fail() : real.inTransaction(work)),
  };
  services = createServices(parseEnv({ NODE_ENV: "test", DATABASE_URL: url }), { db, sql, logger: createLogger({ level: "info", sink: (line) => lines.push(line) }) });
  const app = express();
  app.use(apiRouter(services));
  app.use((_req, res) => void res.status(404).send("not an API route"));
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await services?.db.$disconnect();
  rmSync(dir, { recursive: true, force: true });
});

const paymentSession = (email: string) => ({
  method: "POST",
  headers: { "content-type": "application/json", "shopify-shop-domain": "demo-shop.myshopify.com", "shopify-request-id": randomUUID(), "shopify-api-version": "2026-04" },
  body: JSON.stringify({
    id: randomUUID(),
    gid: `gid://shopify/PaymentSession/${randomUUID()}`,
    group: randomUUID(),
    amount: "49.90",
    currency: "EUR",
    test: true,
    kind: "sale",
    payment_method: { type: "offsite", data: { cancel_url: "https://demo-shop.myshopify.com/cancel" } },
    proposed_at: "2026-11-23T10:00:00Z",
    customer: { email, locale: "en" },
  }),
});

it("answers any other method than POST with 405 and the method it takes, on every route", async () => {
  for (const route of API_ROUTES) {
    const path = route.path.replace(":token", "a".repeat(24));
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const answer = await fetch(`${origin}${path}`, { method });
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.headers.get("allow")).toBe("POST");
      expect(((await answer.json()) as { error: string }).error).toBe("method_not_allowed");
    }
  }
});

it("answers a handler that fails with 500 and a reason, logs it with Shopify's request id but without the request, and goes on serving", async () => {
  failing = true;
  const request = paymentSession("shopper-in-failure@example.com");
  try {
    const answer = await fetch(`${origin}/payments/session`, request);
    expect(answer.status).toBe(500);
    expect(answer.headers.get("content-type")).toContain("application/json");
    expect(await answer.json()).toMatchObject({ error: "internal_error" });
  } finally {
    failing = false;
  }
  const logged = lines.filter((line) => line.includes("API request failed"));
  expect(logged).toHaveLength(1);
  expect(logged[0]).toContain("/payments/session");
  expect(logged[0]).toContain("the database went away");
  expect(JSON.parse(logged[0]!)).toMatchObject({ requestId: request.headers["shopify-request-id"] });
  expect(lines.join("\n")).not.toContain("shopper-in-failure@example.com");

  // The database is back: the same route answers from it (this shop never installed the app).
  const next = await fetch(`${origin}/payments/session`, paymentSession("shopper@example.com"));
  expect(next.status).toBe(422);
  expect(await next.json()).toMatchObject({ error: "shop_not_configured" });
});

it("refuses a body over the limit with 413 and keeps the connection for the next request", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const post = (body: string) =>
    new Promise<{ status: number; reused: boolean; text: string }>((resolve, reject) => {
      const req = http.request(`${origin}/gateway/webhooks/${"b".repeat(24)}`, { method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, text }));
      });
      req.on("error", reject);
      req.end(body);
    });
  try {
    const huge = await post(`{"padding":"${"x".repeat(4_000_000)}"}`);
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.text)).toMatchObject({ error: "body_too_large" });
    const next = await post("{}");
    expect(next.status).toBe(404);
    expect(next.reused).toBe(true);
  } finally {
    agent.destroy();
  }
});

it("mounts only the API's paths: anything else goes on to the next handler", async () => {
  const answer = await fetch(`${origin}/payments/sessions-list`, { method: "POST" });
  expect(answer.status).toBe(404);
  expect(await answer.text()).toBe("not an API route");
});
