// On SQLite every statement runs on the app's thread: libsql completes it synchronously.
// Statements queued on the connection must still let the event loop turn between them,
// or the server's requests wait until the queue is empty; and statements run with turns of
// the event loop between them, after transactions, must not fail.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterAll, expect, it } from "vitest";
import { Prisma } from "../../generated/prisma/sqlite/client";
import { openAppDatabase, type AppDatabase } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";

const dirs: string[] = [];

async function freshDatabase(): Promise<AppDatabase> {
  const dir = mkdtempSync(join(tmpdir(), "sqlite-loop-"));
  dirs.push(dir);
  const url = `file:${join(dir, "app.db")}`;
  await applyMigrations(url);
  return openAppDatabase(url);
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs `work` while counting the event loop's turns (a setImmediate that renews itself). */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  try {
    await work();
  } finally {
    running = false;
  }
  return turns;
}

it("lets the event loop turn between statements, in a chain and queued on the connection", async () => {
  const { db, sql } = await freshDatabase();
  try {
    await db.gatewayCall.create({ data: { id: "call", deviceHash: "device", class: "general", at: new Date() } });
    const count = () => sql.query(Prisma.sql`SELECT COUNT(*) AS "n" FROM "GatewayCall"`);
    const settleLike = () =>
      db.$transaction(async (tx) => {
        await tx.gatewayCall.findFirst({ where: { id: "call" } });
        await tx.gatewayCall.update({ where: { id: "call" }, data: { class: "general" } });
      });
    // 20 x 3 statements awaited one after the other, as a worker's pass awaits them.
    const chained = await turnsDuring(async () => {
      for (let i = 0; i < 20; i++) {
        await count();
        await settleLike();
      }
    });
    // 60 statements at once, waiting for the connection in turn.
    const queued = await turnsDuring(() => Promise.all(Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? settleLike() : count()))));
    // Handed on within one microtask after another, either runs in a single turn.
    expect(chained).toBeGreaterThanOrEqual(60);
    expect(queued).toBeGreaterThanOrEqual(60);
  } finally {
    await db.$disconnect();
  }
});

it("runs statements after transactions, with turns of the event loop between them, without an error", async () => {
  const failures: string[] = [];
  for (let run = 0; run < 60; run++) {
    const { db, sql } = await freshDatabase();
    try {
      for (let i = 0; i < 20; i++) {
        await nextTurn();
        await db.gatewayCall.create({ data: { id: `call-${i}`, deviceHash: "device", class: "general", at: new Date() } });
        await nextTurn();
        await db.$transaction([db.gatewayCall.count(), db.gatewayCall.findFirst({ where: { id: `call-${i}` } })]);
        await nextTurn();
        await sql.query(Prisma.sql`SELECT COUNT(*) AS "n" FROM "GatewayCall"`);
      }
    } catch (error) {
      failures.push(error instanceof Error ? error.message.split("\n").filter(Boolean).at(-1)! : String(error));
    } finally {
      await db.$disconnect();
    }
  }
  expect(failures).toEqual([]);
}, 60_000);
