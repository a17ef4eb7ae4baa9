// Start-up against a PostgreSQL server that takes connections but never answers (overloaded,
// a network path that drops packets). README (Production, Database): "opening a connection
// gives up after 5 s", for the app's pool and for the migrations server/main.ts applies first on
// a connection of their own: the start stops with a reason instead of hanging, silent.
import { expect, it } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";
import { silentServerForFile } from "../support/silent-server";

const silentPort = silentServerForFile();

it("applying the migrations at start gives up on a database that never answers, as the pool does after 5 s", async () => {
  const attempt = applyMigrations(`postgresql://app@127.0.0.1:${silentPort()}/app`).then(
    () => "applied",
    (error: Error) => `failed: ${error.message}`,
  );
  const outcome = await Promise.race([attempt, new Promise<string>((resolve) => setTimeout(() => resolve("still waiting after 12 s"), 12_000))]);
  expect(outcome).toMatch(/^failed/);
}, 20_000);
