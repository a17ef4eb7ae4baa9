// The app's port is already taken (a second `npm run dev`, another service on 3000): the start
// fails with the reason and what to do, instead of an uncaught exception; and a caller of
// startAppServer (the tests' stacks, which then choose another port) gets the error back.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it, onTestFinished } from "vitest";
import { parseEnv } from "../../app/config/env.server";
import { applyMigrations } from "../../app/db/migrate.server";
import { silentLogger } from "../../app/lib/logger.server";
import { startAppServer } from "../../server/app";

let occupier: Server;
let port: number;
let databaseUrl: string;

beforeAll(async () => {
  occupier = createServer((socket) => socket.end("occupied\n"));
  await new Promise<void>((resolve) => occupier.listen(0, "127.0.0.1", resolve));
  port = (occupier.address() as { port: number }).port;
  databaseUrl = `file:${join(mkdtempSync(join(tmpdir(), "port-taken-")), "app.db")}`;
  await applyMigrations(databaseUrl);
});

afterAll(async () => {
  await new Promise<void>((resolve) => occupier.close(() => resolve()));
});

async function occupierStillAnswers(): Promise<string> {
  const { connect } = await import("node:net");
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString()));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

it("startAppServer on a taken port rejects with EADDRINUSE, and the port's owner goes on answering", async () => {
  const env = parseEnv({ NODE_ENV: "test", DATABASE_URL: databaseUrl, HOST: "127.0.0.1", PORT: String(port) });
  const outcome = await startAppServer({ env, mode: "vite", workers: false, overrides: { logger: silentLogger } }).then(
    async (server) => {
      await server.close();
      return "started";
    },
    (error: NodeJS.ErrnoException) => error.code,
  );
  expect(outcome).toBe("EADDRINUSE");
  expect(await occupierStillAnswers()).toBe("occupied\n");
}, 60_000);

it("the app's process on a taken port exits 1 with one log line: the port, the reason and what to do (no stack trace)", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
    env: { ...process.env, NODE_ENV: "development", DATABASE_URL: databaseUrl, HOST: "127.0.0.1", PORT: String(port), WORKERS: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  // Never left running, whatever the test's end.
  onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")));
  const code = await exited;
  expect(code).toBe(1);
  // The app's own log lines are JSON objects (a library may print a plain line of its own).
  const lines = output.trim().split("\n");
  const logged = lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as { level: string; msg: string });
  expect(logged).toEqual([expect.objectContaining({ level: "error", msg: expect.stringContaining(`Cannot listen on 127.0.0.1:${port} (EADDRINUSE)`) })]);
  expect(logged[0]!.msg).toContain("set PORT to another port");
  expect(lines.filter((line) => /^\s+at /.test(line)), "a stack trace").toEqual([]);
  expect(await occupierStillAnswers()).toBe("occupied\n");
}, 90_000);
