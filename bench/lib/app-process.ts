// The app in its own process (entry of a forked child), so its latency and memory are its
// own and not the load generator's. Answers "logs", "profile.sessions" and the in-app
// request times ("requests.reset", "requests.inApp") besides the built-in commands.
import { performance } from "node:perf_hooks";
import { serveParent } from "./child-process";
import { startBenchApp, type BenchAppOptions, type BenchShop } from "./bench-app";
import { profileSessions } from "./session-profile";
import { summarize } from "./stats";

export interface AppProcessInfo {
  url: string;
  shops: BenchShop[];
}

serveParent<BenchAppOptions, AppProcessInfo>(async (config) => {
  const bench = await startBenchApp(config);
  // How long each POST spent in the app: from its request event to the last byte of its answer
  // handed to the socket. What the client measures beyond that is the network and the client.
  let inApp: number[] = [];
  bench.app.httpServer.prependListener("request", (request, response) => {
    if (request.method !== "POST") return;
    const t0 = performance.now();
    response.once("finish", () => inApp.push(performance.now() - t0));
  });
  return {
    info: { url: bench.app.url, shops: bench.shops },
    handlers: {
      logs: () => bench.logs,
      "requests.reset": () => {
        inApp = [];
        return null;
      },
      "requests.inApp": () => summarize(inApp),
      "profile.sessions": (args) => {
        const { shopDomain, bodies } = args as { shopDomain: string; bodies: string[] };
        return profileSessions(bench.services, shopDomain, bodies);
      },
    },
    stop: () => bench.close(),
  };
});
