// The quota day's counting proxy (bench/lib/counting-proxy.ts) must count every call that
// reached the gateway: the gateway's throttles run before its handler, so a call whose
// connection is reset still counts against the device's quota.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type SandboxHandle } from "../../sandbox/server";
import { startCountingProxy, type CountingProxy } from "../../bench/lib/counting-proxy";

describe("the quota day's counting proxy", () => {
  let sandbox: SandboxHandle;
  let counting: CountingProxy;
  let deviceKey: string;

  const control = async (path: string, body: unknown) => {
    const response = await fetch(`${sandbox.origin}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, host: "127.0.0.1", dbPath: ":memory:" });
    counting = await startCountingProxy(sandbox.origin, () => Date.now());
    const signup = (await control("/sandbox/merchants", { name: "counting-proxy" })) as { device: { identifier: string } };
    deviceKey = signup.device.identifier;
  });

  afterAll(async () => {
    await counting?.close();
    await sandbox?.close();
  });

  it("records a call whose connection was reset, with status 0, as well as an answered one", async () => {
    await control("/sandbox/faults", { endpoint: "orders.list", kind: "reset", count: 1 });
    const reset = await fetch(`${counting.url}/api/v1/orders/`, { headers: { "X-Device-Id": deviceKey } }).catch(() => null);
    expect(reset?.status ?? 502).toBe(502);
    const answered = await fetch(`${counting.url}/api/v1/orders/`, { headers: { "X-Device-Id": deviceKey } });
    expect(answered.status).toBe(200);
    await answered.text();
    // Both reached the gateway and both count against the device's quota.
    expect(counting.calls.map((c) => [c.endpoint, c.status])).toEqual([
      ["orders.list", 0],
      ["orders.list", 200],
    ]);
  });
});
