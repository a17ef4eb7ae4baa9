// The app in its own process (entry of a forked child), so its latency and memory are its
// own and not the load generator's. Answers "logs" and "profile.sessions" besides the
// built-in memory commands.
import { serveParent } from "./child-process";
import { startBenchApp, type BenchAppOptions, type BenchShop } from "./bench-app";
import { profileSessions } from "./session-profile";

export interface AppProcessInfo {
  url: string;
  shops: BenchShop[];
}

serveParent<BenchAppOptions, AppProcessInfo>(async (config) => {
  const bench = await startBenchApp(config);
  return {
    info: { url: bench.app.url, shops: bench.shops },
    handlers: {
      logs: () => bench.logs,
      "profile.sessions": (args) => {
        const { shopDomain, bodies } = args as { shopDomain: string; bodies: string[] };
        return profileSessions(bench.services, shopDomain, bodies);
      },
    },
    stop: () => bench.close(),
  };
});
