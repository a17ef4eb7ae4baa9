// Liveness and readiness apart: /livez says the process answers and asks nothing else, so an
// orchestrator that restarts instances on it does not restart them all when the database is out,
// nor one that is draining; /healthz, which the load balancer asks, says whether the instance
// should be sent requests (the database answers; not once it is stopping).
import { expect, it } from "vitest";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { SHUTDOWN_GRACE_MS: "2000" } });

async function answer(path: string): Promise<{ status: number; body: unknown; cache: string | null }> {
  const response = await fetch(`${stack().app.url}${path}`);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : null, cache: response.headers.get("cache-control") };
}

it("/livez answers 200 under the router's spellings, never cached, and HEAD too", async () => {
  for (const path of ["/livez", "/livez/", "/LIVEZ", "/Livez?probe=kubelet"]) {
    expect(await answer(path), path).toEqual({ status: 200, body: { status: "alive" }, cache: "no-store" });
  }
  expect((await fetch(`${stack().app.url}/livez`, { method: "HEAD" })).status).toBe(200);
});

it("while the database fails, /healthz answers 503 and /livez still 200", async () => {
  // The app's database, its shops refusing every read (Prisma's model delegates cannot be spied on).
  const services = stack().services as { db: unknown };
  const real = services.db as object;
  let reads = 0;
  const failingShops = { count: () => (reads++, Promise.reject(new Error("connection refused"))) };
  services.db = new Proxy(real, { get: (target, key) => (key === "shop" ? failingShops : Reflect.get(target, key, target)) });
  try {
    expect((await answer("/healthz")).status).toBe(503);
    expect(await answer("/livez")).toMatchObject({ status: 200, body: { status: "alive" } });
    expect(reads).toBe(1);
  } finally {
    services.db = real;
  }
  // The database back: ready again, with no restart.
  expect((await answer("/healthz")).status).toBe(200);
});

it("through the shutdown grace, /healthz answers 503 and /livez 200", async () => {
  const app = stack().app;
  const closing = app.close();
  const during = { healthz: (await answer("/healthz")).status, livez: (await answer("/livez")).status };
  await closing;
  await stack().restartApp({ workers: false });
  expect(during).toEqual({ healthz: 503, livez: 200 });
});
