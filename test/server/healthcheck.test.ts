// The image's health check, run as Docker runs it (the Dockerfile's HEALTHCHECK command, its
// 3 s timeout, the container's environment): healthy when /livez (liveness; or the path given
// to the command, /healthz for readiness) answers 2xx where the app listens, over HTTPS when the app serves TLS itself (MTLS_MODE=direct), at HOST when it is a
// specific address; unhealthy otherwise.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { dirname } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createTestPki } from "./certificates";
import { stackForFile } from "../support/stack";

const pki = createTestPki();
afterAll(() => pki.remove());

const stack = stackForFile({
  workers: false,
  env: { MTLS_MODE: "direct", TLS_CERT_FILE: pki.server.certFile, TLS_KEY_FILE: pki.server.keyFile, MTLS_CA_FILE: pki.shopifyCa.certFile },
});

const ROOT = new URL("../../", import.meta.url);

/** The Dockerfile's HEALTHCHECK command, as Docker runs it: its exec form as is, its shell form through sh -c. */
function healthCheckCommand(): string[] {
  const line = readFileSync(new URL("Dockerfile", ROOT), "utf8")
    .split("\n")
    .find((text) => text.startsWith("HEALTHCHECK"));
  const command = /\bCMD (.*?)\s*$/.exec(line ?? "")?.[1];
  if (!command) throw new Error(`no HEALTHCHECK command in the Dockerfile: ${line}`);
  return command.startsWith("[") ? (JSON.parse(command) as string[]) : ["/bin/sh", "-c", command];
}

/** Runs the health check (with `extra` arguments after the Dockerfile's) with only `env` as the container's environment (node on the PATH); its exit code (null: still running after Docker's 3 s). */
function runHealthCheck(env: Record<string, string>, ...extra: string[]): Promise<number | null> {
  const [program, ...dockerfileArgs] = healthCheckCommand();
  const args = [...dockerfileArgs, ...extra];
  return new Promise((resolve) => {
    const path = `${dirname(process.execPath)}:${process.env.PATH ?? ""}`;
    execFile(program!, args, { cwd: ROOT, env: { NODE_ENV: "production", PATH: path, ...env }, timeout: 3_000 }, (error) => {
      if (!error) return resolve(0);
      resolve(typeof error.code === "number" ? error.code : null);
    });
  });
}

/** A plain HTTP server on `host` whose /livez answers `status` (and /healthz `readiness`). */
async function plainServer(host: string, status: number, readiness = status): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res.writeHead(req.url === "/livez" ? status : req.url === "/healthz" ? readiness : 404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

it("reports the app serving HTTPS itself (MTLS_MODE=direct) as healthy, and not when asked over plain HTTP", async () => {
  const url = new URL(stack().app.url);
  expect(url.protocol).toBe("https:");
  // The app answers over HTTPS (this first request also has the development server compile
  // the route), and without a client certificate only where Shopify's is not required.
  const get = (path: string) =>
    new Promise<number>((resolve, reject) => {
      https.get(`${stack().app.url}${path}`, { ca: readFileSync(pki.serverCa.certFile) }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on("error", reject);
    });
  expect(await get("/healthz")).toBe(200);
  expect(await get("/livez")).toBe(200);
  expect(await get("/payments/session")).toBe(403);
  const env = { PORT: url.port, HOST: "127.0.0.1", MTLS_MODE: "direct", TLS_CERT_FILE: pki.server.certFile, TLS_KEY_FILE: pki.server.keyFile, MTLS_CA_FILE: pki.shopifyCa.certFile };
  expect(await runHealthCheck(env)).toBe(0);
  expect(await runHealthCheck(env, "/healthz")).toBe(0);
  expect(await runHealthCheck({ ...env, HOST: "0.0.0.0" })).toBe(0);
  // The same port asked over HTTP: no health answer.
  expect(await runHealthCheck({ PORT: url.port, HOST: "127.0.0.1" })).toBe(1);
}, 20_000);

it("asks a plain app at HOST when it is a specific address, and at loopback when it is 0.0.0.0", async () => {
  const specific = await plainServer("127.0.0.2", 200);
  const wildcard = await plainServer("0.0.0.0", 200);
  try {
    expect(await runHealthCheck({ PORT: String(specific.port), HOST: "127.0.0.2" })).toBe(0);
    expect(await runHealthCheck({ PORT: String(wildcard.port), HOST: "0.0.0.0" })).toBe(0);
    expect(await runHealthCheck({ PORT: String(wildcard.port) })).toBe(0);
  } finally {
    await Promise.all([specific.close(), wildcard.close()]);
  }
}, 20_000);

it("asks liveness (/livez) by default, and readiness (/healthz) when given that path", async () => {
  // A database outage: the process answers, the app is not ready.
  const unready = await plainServer("127.0.0.1", 200, 503);
  try {
    const env = { PORT: String(unready.port), HOST: "127.0.0.1" };
    expect(await runHealthCheck(env)).toBe(0);
    expect(await runHealthCheck(env, "/healthz")).toBe(1);
    expect(await runHealthCheck(env, "healthz")).toBe(1);
  } finally {
    await unready.close();
  }
}, 20_000);

it("reports an app that answers /livez with an error, or does not answer, as unhealthy", async () => {
  const failing = await plainServer("127.0.0.1", 503);
  const { port } = failing;
  try {
    expect(await runHealthCheck({ PORT: String(port), HOST: "127.0.0.1" })).toBe(1);
  } finally {
    await failing.close();
  }
  expect(await runHealthCheck({ PORT: String(port), HOST: "127.0.0.1" })).toBe(1);
}, 20_000);
