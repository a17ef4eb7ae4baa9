// A PostgreSQL server that takes connections but never answers (overloaded, or a network path
// that drops packets): queries fail after the pool's connection timeout instead of waiting for
// ever, and /healthz answers 503 in time for a load balancer's check.
import type { LoaderFunctionArgs } from "@remix-run/node";
import { expect, it } from "vitest";
import { openAppDatabase } from "../../app/db/database.server";
import { loader as healthz } from "../../app/routes/healthz";
import { silentServerForFile } from "../support/silent-server";

const silentPort = silentServerForFile();

it("a query to a database that never answers fails instead of waiting for ever", async () => {
  const { db } = openAppDatabase(`postgresql://app@127.0.0.1:${silentPort()}/app`);
  try {
    await expect(db.shop.count()).rejects.toThrow();
  } finally {
    await db.$disconnect().catch(() => undefined);
  }
}, 20_000);

const healthzWith = (count: () => Promise<number>) =>
  healthz({ context: { services: { db: { shop: { count } } } } } as unknown as LoaderFunctionArgs) as Promise<Response>;

it("/healthz answers 503 when the database does not answer in time, 503 when it fails, and 200 when it answers", async () => {
  const stuck = await healthzWith(() => new Promise<number>(() => undefined));
  expect(stuck.status).toBe(503);
  expect(await stuck.json()).toEqual({ status: "database_unavailable", reason: "no answer in time" });
  expect((await healthzWith(() => Promise.reject(new Error("connection refused")))).status).toBe(503);
  expect((await healthzWith(() => Promise.resolve(3))).status).toBe(200);
}, 20_000);
