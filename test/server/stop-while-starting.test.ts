// The app's process stopped while it is still starting: its migrations wait for another
// instance's migrator (here the test holds the migrators' lock), a deploy is rolled back and the
// container is stopped. The process ends at once on SIGTERM, with a log line saying so, instead
// of ignoring the signal (as PID 1 in a container does when no handler is installed) until the
// container's kill.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "../support/postgres";
import { holdMigratorsLock, migratorAskingForLock } from "../support/migrators";

let database: TestPostgresDatabase;
beforeAll(async () => void (database = await createTestPostgresDatabase()));
afterAll(async () => database?.drop());

it("SIGTERM while the migrations wait for another instance's: the process exits 143 at once, saying why", async () => {
  const otherMigrator = await database.connect();
  await holdMigratorsLock(otherMigrator);

  const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
    env: { ...process.env, NODE_ENV: "development", DATABASE_URL: database.url, HOST: "127.0.0.1", PORT: "0", WORKERS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")));

  // The process waits for the migrators' lock.
  await migratorAskingForLock(otherMigrator, "the app's migrator waiting for the lock", 30_000);

  const signalled = Date.now();
  child.kill("SIGTERM");
  const code = await Promise.race([exited, new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 10_000))]);
  expect(code).toBe(143);
  expect(Date.now() - signalled).toBeLessThan(10_000);
  const logged = output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { level: string; msg: string });
  expect(logged).toContainEqual(expect.objectContaining({ level: "warn", msg: "SIGTERM received while starting: exiting" }));
  // Nothing was migrated meanwhile: the other migrator still holds the lock and finds no table of the app's.
  const { rows } = await otherMigrator.query(`SELECT to_regclass('"Shop"') AS "table"`);
  expect(rows[0].table).toBeNull();
}, 60_000);
