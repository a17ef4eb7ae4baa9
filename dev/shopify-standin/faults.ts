// Injected failures of the GraphQL endpoint, for resilience tests: the next `count`
// requests fail in the chosen way, then the endpoint answers normally again.

import { z } from "zod";

export const FAULT_MODES = ["http_500", "http_429", "http_403", "http_402", "http_423", "throttled", "network", "slow"] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export const faultRequestSchema = z.object({
  mode: z.enum(FAULT_MODES),
  count: z.number().int().min(1).max(1000).default(1),
  /** For "slow": how long to hold the answer. The call is carried out whether or not its client still waits, as Shopify does. */
  delayMs: z.number().int().min(0).max(120_000).default(5_000),
});
export type FaultRequest = z.input<typeof faultRequestSchema>;

export interface ActiveFault {
  mode: FaultMode;
  remaining: number;
  delayMs: number;
}

export class FaultQueue {
  private active: ActiveFault | null = null;

  set(request: z.output<typeof faultRequestSchema>): ActiveFault {
    this.active = { mode: request.mode, remaining: request.count, delayMs: request.delayMs };
    return { ...this.active };
  }

  clear(): void {
    this.active = null;
  }

  current(): ActiveFault | null {
    return this.active ? { ...this.active } : null;
  }

  /** Takes one fault for the request being served, if any is armed. */
  take(): { mode: FaultMode; delayMs: number } | null {
    if (!this.active) return null;
    const { mode, delayMs } = this.active;
    this.active.remaining -= 1;
    if (this.active.remaining <= 0) this.active = null;
    return { mode, delayMs };
  }
}
