// The database-backed gateway quota that every instance of the app shares.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openDatabase, type Database } from "../../app/db/database.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { createPrismaQuotaStore } from "../../app/db/prisma-quota-store.server";

let db: Database;
let url: string;

beforeAll(async () => {
  url = `file:${join(mkdtempSync(join(tmpdir(), "quota-")), "app.db")}`;
  await applyMigrations(url);
  db = openDatabase(url);
});

afterAll(async () => {
  await db.$disconnect();
});

it("enforces the minute and day windows, critical calls counting in both, and says when room frees up", async () => {
  const store = createPrismaQuotaStore(db, url, { generalPerMinute: 3, generalPerDay: 5, criticalPerMinute: 1, criticalPerDay: 2 });
  const t0 = new Date("2026-11-22T10:00:00Z");
  const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
  expect(await store.take("d", "critical", at(0))).toEqual({ ok: true });
  expect(await store.take("d", "critical", at(1))).toMatchObject({ ok: false, window: "critical_minute", retryAt: at(60) });
  expect(await store.take("d", "general", at(2))).toEqual({ ok: true });
  expect(await store.take("d", "general", at(3))).toEqual({ ok: true });
  expect(await store.take("d", "general", at(4))).toMatchObject({ ok: false, window: "general_minute", retryAt: at(60) });
  expect(await store.remaining("d", at(4))).toEqual({ general: { minute: 0, day: 2 }, critical: { minute: 0, day: 1 } });
  expect(await store.take("d", "general", at(61))).toEqual({ ok: true });
  expect(await store.take("d", "critical", at(62))).toEqual({ ok: true });
  // Five calls today: the day window is full until the first one is a day old.
  expect(await store.take("d", "general", at(130))).toMatchObject({ ok: false, window: "general_day", retryAt: at(86_400) });
  expect(await store.remaining("other", at(130))).toEqual({ general: { minute: 3, day: 5 }, critical: { minute: 1, day: 2 } });
});
