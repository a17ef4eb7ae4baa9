// The app's request path as production serves it, for comparison with Vite dev mode:
// server/app.ts in "build" mode, with the server build compiled in memory by Vite's SSR
// loader from the working tree, so no build/ folder is needed or written.
import type { ServerBuild } from "@remix-run/node";
import type { AppEnv } from "../../app/config/env.server";
import type { AppServices } from "../../app/services.server";
import { startAppServer, type AppServer } from "../../server/app";

export async function startPrebuiltAppServer(options: { env: AppEnv; services: AppServices; workers: boolean }): Promise<AppServer> {
  const vite = await import("vite");
  const compiler = await vite.createServer({ server: { middlewareMode: true, hmr: false }, appType: "custom", logLevel: "warn" });
  const build = (await compiler.ssrLoadModule("virtual:remix/server-build")) as ServerBuild;
  await compiler.close();
  return startAppServer({ env: options.env, mode: "build", build, services: options.services, workers: options.workers });
}
