// Throttle limits so high that neither the app's quota store nor the sandbox ever makes a
// request wait: the latency benchmarks measure work, not throttling. (The simulated day
// keeps the real limits.)
export const UNTHROTTLED_APP_ENV: Record<string, string> = {
  GATEWAY_LIMIT_PER_MINUTE: "1000000",
  GATEWAY_LIMIT_PER_DAY: "10000000",
  GATEWAY_CRITICAL_LIMIT_PER_MINUTE: "1000000",
  GATEWAY_CRITICAL_LIMIT_PER_DAY: "10000000",
};
export const UNTHROTTLED_SANDBOX = { perMinute: 1_000_000, perDay: 10_000_000, criticalPerMinute: 1_000_000, criticalPerDay: 10_000_000 };
