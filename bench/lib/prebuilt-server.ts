// The app's request path as production serves it, for comparison with Vite dev mode:
// the same Express pipeline as server/app.ts in "build" mode (compression, the mTLS guard,
// static files, the Remix handler, the workers), with the server build loaded once instead
// of through the Vite dev middleware on every request. The build is compiled by Vite's SSR loader from the
// working tree, so no build/ folder is needed or written.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequestHandler } from "@remix-run/express";
import type { ServerBuild } from "@remix-run/node";
import compression from "compression";
import express from "express";
import type { AppEnv } from "../../app/config/env.server";
import { shareAppDatabase } from "../../app/db.server";
import type { AppServices } from "../../app/services.server";
import { startWorkers } from "../../app/workers.server";
import type { AppServer } from "../../server/app";
import { shopifyMtlsGuard, SHOPIFY_MTLS_PROTECTED_PATHS } from "../../server/mtls";

export async function startPrebuiltAppServer(options: { env: AppEnv; services: AppServices; workers: boolean }): Promise<AppServer> {
  const { env, services } = options;
  // As server/app.ts: the whole process (routes' session storage included) shares the services' client.
  shareAppDatabase(services.db);
  const vite = await import("vite");
  const compiler = await vite.createServer({ server: { middlewareMode: true, hmr: false }, appType: "custom", logLevel: "warn" });
  const build = (await compiler.ssrLoadModule("virtual:remix/server-build")) as ServerBuild;
  await compiler.close();

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", env.MTLS_MODE === "proxy");
  app.use(compression());
  app.use(
    shopifyMtlsGuard({
      mode: env.MTLS_MODE,
      proxyHeader: env.MTLS_PROXY_HEADER,
      proxyHeaderValue: env.MTLS_PROXY_HEADER_VALUE,
      protectedPaths: SHOPIFY_MTLS_PROTECTED_PATHS,
      logger: services.logger,
    }),
  );
  app.use("/assets", express.static("build/client/assets", { immutable: true, maxAge: "1y" }));
  app.use(express.static("build/client", { maxAge: "1h" }));
  app.all("*", createRequestHandler({ build, mode: "production", getLoadContext: () => ({ services }) }));
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(env.PORT, env.HOST, resolve));
  const { port } = server.address() as AddressInfo;
  const workers = options.workers ? startWorkers(services) : null;
  return {
    url: `http://${env.HOST}:${port}`,
    services,
    workers,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await workers?.stop();
      await services.db.$disconnect();
    },
  };
}
