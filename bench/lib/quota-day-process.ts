// Runs a part of the simulated day (benchmark 3) in its own process: the app, the sandbox
// and the stand-ins share this process and its simulated clock, so its memory figures are
// theirs together (reported as such).
import { runQuotaDayPart } from "../quota-day";
import { serveParent } from "./child-process";

export interface QuotaDayConfig {
  databaseUrl: string;
  quick: boolean;
  part: number;
  parts: number;
  /** Prefix of this process's progress lines (parts run side by side). */
  label: string;
}

serveParent<QuotaDayConfig, { pid: number }>(async (config) => ({
  info: { pid: process.pid },
  handlers: {
    run: async () => {
      const part = await runQuotaDayPart({ ...config, log: (line: string) => console.log(line) });
      return { ...part, maxRssMiB: Math.round(process.resourceUsage().maxRSS / 102.4) / 10 };
    },
  },
  stop: async () => undefined,
}));
