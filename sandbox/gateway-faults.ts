// Injected gateway failures for the app's resilience tests: the next N calls of
// an endpoint answer 500, 429, a refusal (404) in words that name no cause or a proxy's
// HTML 400, hang, or have their connection reset, either instead of the real work or
// after it (e.g. the order is created, then 500).
export const FAULT_ENDPOINTS = ["currencies", "orders.create", "orders.list", "orders.info", "device.create"] as const;
export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];

export const FAULT_KINDS = ["http_500", "http_429", "http_404", "proxy_400", "timeout", "reset"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface GatewayFault {
  endpoint: FaultEndpoint;
  kind: FaultKind;
  remaining: number;
  afterCreate: boolean;
}

export class GatewayFaults {
  private faults: GatewayFault[] = [];

  add(fault: GatewayFault): void {
    this.faults.push(fault);
  }

  clear(): void {
    this.faults = [];
  }

  list(): GatewayFault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  /** Takes one use of the first fault armed for the endpoint, if any. */
  take(endpoint: FaultEndpoint): GatewayFault | null {
    const fault = this.faults.find((f) => f.endpoint === endpoint && f.remaining > 0);
    if (!fault) return null;
    fault.remaining -= 1;
    this.faults = this.faults.filter((f) => f.remaining > 0);
    return { ...fault };
  }
}
