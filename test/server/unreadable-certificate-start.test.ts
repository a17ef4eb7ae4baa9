// The app's process started with a certificate path it cannot read (a mounted secret missing, a
// typo): it stops before anything runs, its migrations included, with one log line naming the
// setting, instead of migrating the database and then dying with a stack trace, the new
// release's instances crash-looping while its migrations are already applied.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it, onTestFinished } from "vitest";
import { createTestPki } from "./certificates";

const pki = createTestPki();
const dir = mkdtempSync(path.join(tmpdir(), "unreadable-certificate-"));
afterAll(() => {
  pki.remove();
  rmSync(dir, { recursive: true, force: true });
});

it("a TLS file that cannot be read stops the start before the migrations, with a log line naming the setting", async () => {
  const databaseFile = path.join(dir, "app.db");
  const missing = path.join(dir, "no-such-ca.pem");
  const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], {
    env: {
      ...process.env,
      NODE_ENV: "development",
      DATABASE_URL: `file:${databaseFile}`,
      HOST: "127.0.0.1",
      PORT: "0",
      WORKERS: "false",
      MTLS_MODE: "direct",
      TLS_CERT_FILE: pki.server.certFile,
      TLS_KEY_FILE: pki.server.keyFile,
      MTLS_CA_FILE: missing,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")));
  const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)));

  expect(code).toBe(1);
  const lines = output.split("\n").filter((line) => line.trim() !== "");
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", msg: `MTLS_CA_FILE (${missing}) cannot be read: ENOENT` });
  // Nothing ran: the database was never created, let alone migrated.
  expect(existsSync(databaseFile)).toBe(false);
}, 60_000);
