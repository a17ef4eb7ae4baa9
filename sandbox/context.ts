// What every route of the sandbox is handed: its services, clock and settings.
import type { AccountService } from "./account-service.js";
import type { OffsetClock } from "./clock.js";
import type { GatewayFaults } from "./gateway-faults.js";
import type { SandboxLogger } from "./logger.js";
import type { OrderService } from "./order-service.js";
import type { SandboxStore } from "./store.js";
import type { DeviceThrottle } from "./throttle.js";
import type { WebhookDispatcher } from "./webhook-dispatcher.js";

export interface SandboxContext {
  store: SandboxStore;
  clock: OffsetClock;
  accounts: AccountService;
  orders: OrderService;
  dispatcher: WebhookDispatcher;
  throttle: DeviceThrottle;
  faults: GatewayFaults;
  logger: SandboxLogger;
  /** Base for links the sandbox hands out (web_url, icons): publicUrl, else the listening origin. */
  publicBase(): string;
}

export function webUrlOf(ctx: SandboxContext, shortCode: string): string {
  return `${ctx.publicBase()}/pay/${shortCode}/`;
}
