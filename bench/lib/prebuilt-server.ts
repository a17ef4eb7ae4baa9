// The app's request path as production serves it, for comparison with Vite dev mode:
// server/app.ts in "build" mode, loading build/ exactly as `npm start` does. The runner
// makes that build from the working tree first (buildForProduction), so the figures are
// never those of a stale build, and the app process holds no Vite or compiler.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { AppEnv } from "../../app/config/env.server";
import type { AppServices } from "../../app/services.server";
import { startAppServer, type AppServer } from "../../server/app";

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** `npm run build` (remix vite:build into build/), quietly; rejects with the build's output when it fails. */
export async function buildForProduction(): Promise<void> {
  const remix = fileURLToPath(new URL("node_modules/.bin/remix", `file://${PROJECT_ROOT}`));
  const output: Buffer[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(remix, ["vite:build"], { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
    child.on("error", reject);
    child.on("close", resolve);
  });
  if (code !== 0) throw new Error(`the production build failed (exit ${code}):\n${Buffer.concat(output).toString("utf8").slice(-2000)}`);
}

export async function startPrebuiltAppServer(options: { env: AppEnv; services: AppServices; workers: boolean }): Promise<AppServer> {
  return startAppServer({ env: options.env, mode: "build", services: options.services, workers: options.workers });
}
