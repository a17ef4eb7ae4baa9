// The container's health check (the Dockerfile's HEALTHCHECK): asks the app where and how it
// listens (server/app.ts), and exits 0 when it answers 2xx, 1 otherwise.
// - What it asks: the path given as its argument, /livez by default (liveness: the process
//   answers, whatever the database does). `node server/healthcheck.mjs /healthz` asks for
//   readiness instead (the database answers; 503 through the shutdown grace).
// - HTTPS when TLS_CERT_FILE and TLS_KEY_FILE are set (MTLS_MODE=direct), without checking
//   the certificate: it names the public host, not the address asked here, and MTLS_CA_FILE
//   is the CA of Shopify's client certificates, not of the app's own.
// - HOST, unless it is a wildcard address (0.0.0.0, ::): then the loopback address.
// Plain Node, no dependencies: it runs beside the app with nothing else loaded.
import http from "node:http";
import https from "node:https";

/** Docker's --timeout is 3 s: an answer later than this counts as none. */
const TIMEOUT_MS = 2_500;

const setting = (name) => process.env[name]?.trim() || undefined;

const path = process.argv[2] ?? "/livez";
if (!/^\/[^\s]*$/.test(path)) {
  console.error(`health check: the path to ask must start with "/" (given: ${JSON.stringify(path)})`);
  process.exit(1);
}

const tls = Boolean(setting("TLS_CERT_FILE") && setting("TLS_KEY_FILE"));
const host = setting("HOST") ?? "0.0.0.0";
const options = {
  host: host === "0.0.0.0" ? "127.0.0.1" : host === "::" ? "::1" : host.replace(/^\[(.*)\]$/, "$1"),
  port: Number(setting("PORT") ?? "3000"),
  path,
  timeout: TIMEOUT_MS,
};

function fail(reason) {
  console.error(`health check: ${reason}`);
  process.exit(1);
}

const request = (tls ? https : http).get({ ...options, ...(tls ? { rejectUnauthorized: false } : {}) }, (response) => {
  const status = response.statusCode ?? 0;
  response.resume();
  if (status >= 200 && status < 300) process.exit(0);
  fail(`${options.path} answered ${status}`);
});
request.on("timeout", () => request.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
request.on("error", (error) => fail(`${tls ? "https" : "http"}://${options.host}:${options.port}${options.path}: ${error.message}`));
