// Start-up against a PostgreSQL server that takes connections but never answers (overloaded,
// a network path that drops packets). README (Production, Database): "opening a connection
// gives up after 5 s", for the app's pool and for the migrations server/main.ts applies first on
// a connection of their own: the start stops with a reason instead of hanging, silent.
import net from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";

let silent: net.Server;
const sockets = new Set<net.Socket>();
let port = 0;

beforeAll(async () => {
  silent = net.createServer((socket) => void sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  port = (silent.address() as net.AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

it("applying the migrations at start gives up on a database that never answers, as the pool does after 5 s", async () => {
  const attempt = applyMigrations(`postgresql://app@127.0.0.1:${port}/app`).then(
    () => "applied",
    (error: Error) => `failed: ${error.message}`,
  );
  const outcome = await Promise.race([attempt, new Promise<string>((resolve) => setTimeout(() => resolve("still waiting after 12 s"), 12_000))]);
  expect(outcome).toMatch(/^failed/);
}, 20_000);
