// Builds the app's HTTP(S) server: Express around the machine-facing API and the Remix
// request handler (its bodies bounded, body-limit.ts), the mTLS guard in front of the routes Shopify calls, the composition
// root passed to every handler, loader and action, and the background workers (started
// here, exactly once).
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Server, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import type { ServerBuild } from "@remix-run/node";
import compression from "compression";
import express from "express";
import type { AppEnv } from "../app/config/env.server";
import { shareAppDatabase } from "../app/db.server";
import { createServices, type AppServices, type ServiceOverrides } from "../app/services.server";
import { startWorkers, WORKERS_STOP_ALLOWANCE_MS, type Workers } from "../app/workers.server";
import { MAX_ROUTE_BODY_BYTES } from "../app/lib/http.server";
import { routedPath } from "../app/lib/routed-path";
import { apiRouter } from "./api-router";
import { boundedBodies } from "./body-limit";
import { pageHeaders } from "./page-headers";
import { remixHandler } from "./remix-handler";
import { answerUncaughtErrors, refuseUndecodablePaths } from "./request-errors";
import { buildClientFiles } from "./static-files";
import { startWorkerThread } from "./workers-thread";
import { shopifyMtlsGuard, SHOPIFY_MTLS_PROTECTED_PATHS, tlsOptionsFor } from "./mtls";

/**
 * Connections still open this long after close() began are closed. With the workers' own stop
 * allowance (20 s, run alongside, and 3 s more for a Shopify token renewal under way), shutdown
 * ends before server/main.ts's 25 s forced exit.
 */
const CONNECTION_DRAIN_MS = 15_000;

/** The liveness route (any letter case, a trailing slash: Express's defaults), answered here, before Remix. */
export const LIVENESS_PATH = "/livez";

/** The production build's server (`npm run build`), which "build" mode serves. A computed URL, so TypeScript does not try to resolve a build that may not exist yet. */
export const SERVER_BUILD_URL = new URL("../build/server/index.js", import.meta.url);

export interface AppServerOptions {
  env: AppEnv;
  /** "vite": Vite dev server in middleware mode (npm run dev); "build": build/ (production). */
  mode: "vite" | "build";
  workers?: boolean;
  overrides?: ServiceOverrides;
  services?: AppServices;
  /** The HTTPS options, their files read already (server/main.ts reads them before anything starts); by default, from env. */
  tls?: https.ServerOptions | null;
}

export interface AppServer {
  url: string;
  /** The listening server, for instruments that observe its requests (the benchmark's timing). */
  httpServer: http.Server;
  services: AppServices;
  workers: Workers | null;
  close(): Promise<void>;
}

export async function startAppServer(options: AppServerOptions): Promise<AppServer> {
  const { env } = options;
  const services = options.services ?? createServices(env, options.overrides);
  shareAppDatabase(services.db);
  const app = express();
  app.disable("x-powered-by");
  // Served over the app's own TLS (MTLS_MODE=direct), every answer tells browsers to use HTTPS
  // only for a year: a shopper who follows a plain-http link to their payment page is not
  // served it in clear by anyone on the way. Behind a TLS proxy, the proxy says it.
  app.use((req, res, next) => {
    if ((req.socket as TLSSocket).encrypted) res.setHeader("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY);
    next();
  });
  app.use(refuseUndecodablePaths(services.logger));
  // Once the server is closing, every answer ends its connection: a client (a load balancer)
  // that keeps a connection alive would otherwise keep it open through the shutdown. The health
  // check answers 503 from then on, so the load balancer takes the instance out while it still
  // serves (the shutdown grace).
  let closing = false;
  app.use((req, res, next) => {
    if (!closing) return next();
    res.setHeader("Connection", "close");
    // The health route under every spelling the router serves it at (any case, a trailing slash).
    if (routedPath(req.originalUrl)?.replace(/\/+$/, "") === "/healthz") return void res.status(503).json({ status: "shutting_down" });
    next();
  });
  // Liveness: the process answers, and nothing else is asked, the database least of all. An
  // orchestrator restarts an instance whose liveness check fails; a database outage would fail
  // every instance's check at once, and restarting them all mends nothing. It answers 200
  // through the shutdown too: a stopping instance is draining, not stuck. Readiness, which a load
  // balancer asks, is /healthz: the database answers, and 503 from the shutdown's start.
  app.get(LIVENESS_PATH, (_req, res) => void res.set("Cache-Control", "no-store").json({ status: "alive" }));
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
  // The machine-facing API (Shopify's session requests, the gateway's notifications), before
  // Remix and the static files: these paths never reach either.
  app.use(apiRouter(services));

  let build: ServerBuild | (() => Promise<ServerBuild>);
  let closeVite: (() => Promise<void>) | null = null;
  if (options.mode === "vite") {
    const vite = await import("vite");
    // Tests run several app servers at once: no live-reload socket for them (it has one fixed
    // port, and without ws: false Vite still opens its socket server on the default one). Their
    // pre-bundled dependencies are kept apart from `npm run dev`'s: Vite's cache is keyed on
    // NODE_ENV, so a development server (the dev-run tests start one) would make the next test
    // servers bundle them all again, each closing before it is done.
    const forTests = env.NODE_ENV === "test";
    const devServer = await vite.createServer({
      server: { middlewareMode: true, ...(forTests ? { hmr: false as const, ws: false as const } : {}) },
      ...(forTests ? { cacheDir: "node_modules/.vite/app-tests" } : {}),
      appType: "custom",
    });
    // Vite's middlewares decode the whole address, its query too, and warn of one that cannot
    // be: such an address is never one of Vite's modules, so it goes on to the pages, as in production.
    app.use((req, res, next) => (decodableUrl(req.url) ? devServer.middlewares(req, res, next) : next()));
    build = () => devServer.ssrLoadModule("virtual:remix/server-build") as Promise<ServerBuild>;
    closeVite = () => devServer.close();
  } else {
    app.use(buildClientFiles("build/client"));
    build = (await import(/* @vite-ignore */ SERVER_BUILD_URL.href)) as ServerBuild;
  }

  // A server build is served as production serves it, whatever NODE_ENV says.
  const requestMode = options.mode === "build" ? "production" : env.NODE_ENV;
  app.all("*", boundedBodies(MAX_ROUTE_BODY_BYTES), pageHeaders(), remixHandler({ build, mode: requestMode, getLoadContext: () => ({ services }) }));
  app.use(answerUncaughtErrors(services.logger));

  const tls = options.tls === undefined ? tlsOptionsFor(env) : options.tls;
  const server = tls ? https.createServer(tls, app) : http.createServer(app);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  try {
    await listen(server, env.PORT, env.HOST);
  } catch (error) {
    // The port is taken (or not ours to take): nothing started here may outlive the failure.
    await closeVite?.();
    if (!options.services) await services.db.$disconnect();
    throw error;
  }
  const handshaking = server instanceof https.Server ? watchHandshakes(server) : null;
  const address = server.address() as AddressInfo;
  const protocol = server instanceof https.Server ? "https" : "http";
  const host = env.HOST === "0.0.0.0" || env.HOST === "::" ? "localhost" : env.HOST;
  const workers = options.workers === false ? null : env.WORKER_THREAD ? startWorkerThread(services) : startWorkers(services);

  return {
    url: `${protocol}://${host}:${address.port}`,
    httpServer: server,
    services,
    workers,
    async close() {
      // First the shutdown grace: the health check answers 503 while everything else is still
      // served, for SHUTDOWN_GRACE_MS, the time a load balancer needs to stop sending here (a
      // gateway notification sent meanwhile is taken: the gateway never sends one again). Then
      // stop taking requests, and let in-flight ones and the workers' current pass finish, side
      // by side. Connections kept alive are closed as soon as they fall idle, and any still open
      // after CONNECTION_DRAIN_MS are closed (well before a process manager's kill).
      closing = true;
      if (env.SHUTDOWN_GRACE_MS > 0) {
        services.logger.info("Stopping: the health check answers 503 while requests are still served", { graceMs: env.SHUTDOWN_GRACE_MS });
        await new Promise((resolve) => setTimeout(resolve, env.SHUTDOWN_GRACE_MS));
      }
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      handshaking?.closeAll();
      const idleSweep = setInterval(() => server.closeIdleConnections(), 250);
      const deadline = setTimeout(() => server.closeAllConnections(), CONNECTION_DRAIN_MS);
      try {
        // Sessions answered "in progress" while their gateway order was still being made are
        // finished too, within the workers' allowance: the database stays open for them.
        await Promise.all([drained, workers?.stop(), services.lateWork?.settled(WORKERS_STOP_ALLOWANCE_MS)]);
      } finally {
        clearInterval(idleSweep);
        clearTimeout(deadline);
      }
      await closeVite?.();
      await services.db.$disconnect();
    },
  };
}

/**
 * The TCP connections of an HTTPS server whose TLS handshake has not finished. Node's closing of
 * idle (or all) connections reaches only those past it, and close() waits for the others until
 * their handshake times out (two minutes): one a port scanner opened and left would hold the
 * shutdown past the process manager's kill. Closed with the idle ones, as they carry no request.
 */
function watchHandshakes(server: https.Server): { closeAll(): void } {
  const open = new Map<string, Socket>();
  const peer = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;
  server.on("connection", (socket: Socket) => {
    const key = peer(socket);
    open.set(key, socket);
    socket.once("close", () => open.delete(key));
  });
  // The raw connection and its TLS socket share their peer's address and port.
  server.on("secureConnection", (socket: Socket) => open.delete(peer(socket)));
  return {
    closeAll() {
      for (const socket of open.values()) socket.destroy();
      open.clear();
    },
  };
}

function decodableUrl(url: string): boolean {
  try {
    decodeURI(url);
    return true;
  } catch {
    return false;
  }
}

/** Why a server could not listen, when it is the port's fault (taken, or privileged); null for any other failure. */
export function portRefusal(error: unknown): "EADDRINUSE" | "EACCES" | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "EADDRINUSE" || code === "EACCES" ? code : null;
}

/** HTTPS only, for a year, on the app's own TLS. */
export const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

/**
 * How long an idle kept-alive connection is kept open: longer than load balancers keep theirs
 * (60 s on the common ones), so that a balancer never sends a request (a gateway notification,
 * sent once) on a connection the app is closing at that moment, which it would answer with a
 * 502. Node's own 5 s is far shorter. The head of a request may take as long.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
