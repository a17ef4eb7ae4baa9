// Runs the simulated day (benchmark 3) in its own process: the app, the sandbox and the
// stand-ins share this process and its simulated clock, so its memory figures are theirs
// together (reported as such).
import { runQuotaDay } from "../quota-day";
import { serveParent } from "./child-process";

export interface QuotaDayConfig {
  databaseUrl: string;
  dir: string;
  quick: boolean;
  /** Prefix of this process's progress lines (several days run side by side). */
  label: string;
}

serveParent<QuotaDayConfig, { pid: number }>(async (config) => ({
  info: { pid: process.pid },
  handlers: {
    run: async () => {
      const result = await runQuotaDay({ ...config, log: (line) => console.log(`${config.label}:${line}`) });
      return { ...result, maxRssMiB: Math.round(process.resourceUsage().maxRSS / 102.4) / 10 };
    },
  },
  stop: async () => undefined,
}));
