// The gateway sandbox in its own process (entry of a forked child), like the real gateway
// is another machine: its work does not share an event loop with the app or the load.
import { startSandbox } from "../../sandbox/server";
import type { ThrottleLimits } from "../../sandbox/throttle";
import { serveParent } from "./child-process";

export interface SandboxProcessConfig {
  dbPath: string;
  limits: Partial<ThrottleLimits>;
}

export interface SandboxProcessInfo {
  origin: string;
  baseUrl: string;
}

serveParent<SandboxProcessConfig, SandboxProcessInfo>(async (config) => {
  const sandbox = await startSandbox({ port: 0, host: "127.0.0.1", dbPath: config.dbPath, limits: config.limits, tickMs: 1000 });
  return { info: { origin: sandbox.origin, baseUrl: sandbox.baseUrl }, handlers: {}, stop: () => sandbox.close() };
});
