// Where a payment session's time goes inside the app: the use case is called in-process
// (no HTTP, no Express or Remix) through a database client that times every query and a
// fetch that times every gateway round trip. Run in the app's process after the load.
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Prisma } from "../../generated/prisma/sqlite/client";
import type { Database } from "../../app/db/database.server";
import type { PlainSql } from "../../app/db/plain-sql.server";
import { createLogger } from "../../app/lib/logger.server";
import { paymentSessionRequestSchema } from "../../app/payments/shopify-requests";
import { startPaymentSession } from "../../app/payments/start-payment-session";
import { createServices, type AppServices } from "../../app/services.server";
import { round, summarize, type LatencySummary } from "./stats";

export interface SessionProfile {
  sessions: number;
  inProcessMs: LatencySummary;
  /** dbMs is wall time with at least one query running (the quota store runs four at once); otherMs is the rest. */
  perSession: { dbQueries: number; dbMs: number; gatewayHttpMs: number; otherMs: number };
  /** Database operations per session, most expensive first. */
  byOperation: { operation: string; perSession: number; msPerSession: number }[];
  /**
   * The floor under any durable session: one committed single-row INSERT through the app's
   * plain SQL, as the session's writes go. A session waits for two such writes in turn (the
   * session recorded before the gateway is called, with the quota slot taken beside it; the
   * answer stored for retries after it). Each write is timed back to back with the last and
   * after a pause as long as the session's gateway call (p50), as the answer's write comes: a
   * round trip to a database that sat idle costs more on this machine, whoever makes it.
   */
  durableWrite: { backToBackMs: LatencySummary; afterPauseMs: LatencySummary; pauseMs: number; perSession: 2; floorMs: number };
}

/** Times committed single-row inserts into a scratch table of the benchmark's throwaway database, each after `pauseMs` of quiet. */
async function durableWriteFloor(db: Database, sql: PlainSql, count: number, pauseMs: number): Promise<LatencySummary> {
  await db.$executeRawUnsafe(`CREATE TABLE IF NOT EXISTS "BenchWriteFloor" ("id" TEXT PRIMARY KEY, "at" TEXT NOT NULL)`);
  const times: number[] = [];
  for (let i = 0; i < count + 5; i++) {
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const t0 = performance.now();
    await sql.execute(Prisma.sql`INSERT INTO "BenchWriteFloor" ("id", "at") VALUES (${randomUUID()}, ${new Date().toISOString()})`);
    if (i >= 5) times.push(performance.now() - t0);
  }
  await db.$executeRawUnsafe(`DROP TABLE "BenchWriteFloor"`);
  return summarize(times);
}

export async function profileSessions(app: AppServices, shopDomain: string, bodies: readonly string[]): Promise<SessionProfile> {
  const ops = new Map<string, { n: number; ms: number }>();
  // Time with at least one query in flight: concurrent queries are counted once.
  let inFlight = 0;
  let busySince = 0;
  let dbBusyMs = 0;
  async function timed<T>(key: string, run: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    if (inFlight++ === 0) busySince = t0;
    try {
      return await run();
    } finally {
      if (--inFlight === 0) dbBusyMs += performance.now() - busySince;
      const entry = ops.get(key) ?? { n: 0, ms: 0 };
      entry.n++;
      entry.ms += performance.now() - t0;
      ops.set(key, entry);
    }
  }
  // The app's own client, extended: same connection (SQLite allows one per process).
  // Model queries and raw SQL ($queryRaw, $executeRaw) alike.
  const db = app.db.$extends({
    query: {
      $allOperations: ({ model, operation, args, query }) => timed(model ? `${model}.${operation}` : operation, () => query(args)),
    },
  }) as unknown as Database;
  // The app's plain SQL (on PostgreSQL straight on the pool), each statement named by its start.
  const name = (statement: { sql: string }) => `sql: ${statement.sql.replace(/\s+/g, " ").trim().slice(0, 40)}`;
  const sql: PlainSql = {
    kind: app.sql.kind,
    execute: (statement) => timed(name(statement), () => app.sql.execute(statement)),
    query: (statement) => timed(name(statement), () => app.sql.query(statement)),
    executeInTransaction: (statements) => timed(`${name(statements[0]!)} (+${statements.length - 1} in a transaction)`, () => app.sql.executeInTransaction(statements)),
    inTransaction: (work) => timed("sql: transaction", () => app.sql.inTransaction(work)),
  };
  let httpMs = 0;
  const timedFetch: typeof fetch = async (input, init) => {
    const t0 = performance.now();
    try {
      const response = await fetch(input, init);
      const body = await response.arrayBuffer();
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    } finally {
      httpMs += performance.now() - t0;
    }
  };
  const services = createServices(app.env, { db, sql, fetch: timedFetch, logger: createLogger({ level: "info", sink: () => undefined }) });
  const requests = bodies.map((b) => paymentSessionRequestSchema.parse(JSON.parse(b)));
  // Warm the client and caches, then measure from zero.
  for (const request of requests.slice(0, 5)) await startPaymentSession(services, { shopDomain, request });
  ops.clear();
  httpMs = 0;
  dbBusyMs = 0;
  const totals: number[] = [];
  const gatewayCalls: number[] = [];
  for (const request of requests.slice(5)) {
    const t0 = performance.now();
    const httpBefore = httpMs;
    const answer = await startPaymentSession(services, { shopDomain, request });
    totals.push(performance.now() - t0);
    gatewayCalls.push(httpMs - httpBefore);
    if (answer.status !== 200) throw new Error(`profiled session answered ${answer.status}`);
  }
  const n = totals.length;
  const pauseMs = Math.max(1, Math.round(summarize(gatewayCalls).p50));
  const backToBackMs = await durableWriteFloor(app.db, app.sql, n, 0);
  const afterPauseMs = await durableWriteFloor(app.db, app.sql, n, pauseMs);
  const dbMs = dbBusyMs;
  const totalMs = totals.reduce((a, b) => a + b, 0);
  return {
    sessions: n,
    inProcessMs: summarize(totals),
    perSession: {
      dbQueries: round([...ops.values()].reduce((sum, e) => sum + e.n, 0) / n, 1),
      dbMs: round(dbMs / n),
      gatewayHttpMs: round(httpMs / n),
      otherMs: round((totalMs - dbMs - httpMs) / n),
    },
    byOperation: [...ops.entries()]
      .map(([operation, e]) => ({ operation, perSession: round(e.n / n, 1), msPerSession: round(e.ms / n) }))
      .sort((a, b) => b.msPerSession - a.msPerSession),
    durableWrite: { backToBackMs, afterPauseMs, pauseMs, perSession: 2, floorMs: round(backToBackMs.p50 + afterPauseMs.p50) },
  };
}
