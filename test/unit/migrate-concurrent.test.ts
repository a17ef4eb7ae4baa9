// applyMigrations is safe to run from several processes at once: on SQLite, two migrators
// that start together on a fresh database each read the history inside their write
// transaction, so every migration is applied once, with its history row.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";

it("two migrators started together on one SQLite file both succeed", async () => {
  const url = `file:${join(mkdtempSync(join(tmpdir(), "migrate-concurrent-")), "app.db")}`;
  const results = await Promise.allSettled([applyMigrations(url), applyMigrations(url)]);
  const failures = results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason));
  expect(failures).toEqual([]);
  // Each migration applied by exactly one of them, and nothing left to apply.
  const applied = results.flatMap((r) => (r.status === "fulfilled" ? r.value : []));
  expect(applied.length).toBeGreaterThan(0);
  expect(new Set(applied).size).toBe(applied.length);
  expect(await applyMigrations(url)).toEqual([]);
}, 60_000);
