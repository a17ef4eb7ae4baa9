// The gateway directory's clients are cached per shop and environment, and a change of
// credentials is seen at once, whenever and wherever it was made. Its coin list is held for a
// while, and not asked for again for a while after a failure.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect, it, vi } from "vitest";
import { createMemoryQuotaStore } from "../../app/gateway/quota";
import { createLogger } from "../../app/lib/logger.server";
import { createCredentialCipher } from "../../app/shops/credential-cipher.server";
import { createGatewayDirectory, CURRENCIES_FAILURE_PAUSE_MS } from "../../app/shops/gateway-directory.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";

const cipher = createCredentialCipher([{ id: "k1", key: randomBytes(32) }]);
const directory = createGatewayDirectory({
  cipher,
  baseUrls: { live: "http://127.0.0.1:9/api/v1", sandbox: "http://127.0.0.1:9/api/v1" },
  quotaStore: createMemoryQuotaStore(),
  logger: createLogger({ sink: () => undefined }),
});

function shopWith(secretHex: string) {
  const id = "shop-1";
  return {
    id,
    shopDomain: "cache.myshopify.com",
    liveDeviceKeyEnc: null,
    liveSecretKeyEnc: null,
    sandboxDeviceKeyEnc: cipher.encrypt("5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13", credentialContext(id, "sandbox", "device-key")),
    sandboxSecretKeyEnc: cipher.encrypt(secretHex, credentialContext(id, "sandbox", "secret-key")),
    liveRetiredDeviceKeyEnc: null,
    liveRetiredSecretKeyEnc: null,
    sandboxRetiredDeviceKeyEnc: null,
    sandboxRetiredSecretKeyEnc: null,
  };
}

it("reuses a shop's client while its sealed credentials are the same, and none for an environment without them", () => {
  const shop = shopWith("aa".repeat(32));
  const first = directory.forShop(shop, "sandbox");
  expect(first?.secretKeyHex).toBe("aa".repeat(32));
  expect(directory.forShop({ ...shop }, "sandbox")).toBe(first);
  expect(directory.forShop(shop, "live")).toBeNull();
});

it("sees new credentials at once, with nothing else about the shop changed", () => {
  const before = directory.forShop(shopWith("bb".repeat(32)), "sandbox");
  const after = directory.forShop(shopWith("cc".repeat(32)), "sandbox");
  expect(before?.secretKeyHex).toBe("bb".repeat(32));
  expect(after?.secretKeyHex).toBe("cc".repeat(32));
  expect(after?.client).not.toBe(before?.client);
});

it("opens retired credentials apart from the current ones, with their own client", () => {
  const current = shopWith("dd".repeat(32));
  const retired = { ...current, sandboxRetiredDeviceKeyEnc: shopWith("ee".repeat(32)).sandboxDeviceKeyEnc, sandboxRetiredSecretKeyEnc: shopWith("ee".repeat(32)).sandboxSecretKeyEnc };
  expect(directory.retiredFor(current, "sandbox")).toBeNull();
  const old = directory.retiredFor(retired, "sandbox");
  expect(old?.secretKeyHex).toBe("ee".repeat(32));
  expect(directory.forShop(retired, "sandbox")?.secretKeyHex).toBe("dd".repeat(32));
  expect(directory.retiredFor(retired, "sandbox")).toBe(old);
  expect(directory.retiredFor(retired, "live")).toBeNull();
});

it("after a failed coin list asks the gateway no more for a while, shares a call under way, and asks again after the pause", async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  try {
    const list = JSON.stringify((JSON.parse(readFileSync("test/fixtures/gateway/currencies.response.docs-b4bit.json", "utf8")) as { body: unknown }).body);
    let calls = 0;
    let failing = true;
    const counting = createGatewayDirectory({
      cipher,
      baseUrls: { live: "http://127.0.0.1:9/api/v1", sandbox: "http://127.0.0.1:9/api/v1" },
      quotaStore: createMemoryQuotaStore(),
      logger: createLogger({ sink: () => undefined }),
      fetch: async () => {
        calls++;
        return failing ? new Response("{}", { status: 500 }) : new Response(list, { status: 200, headers: { "content-type": "application/json" } });
      },
    });
    const access = counting.forShop(shopWith("ff".repeat(32)), "sandbox")!;
    const once = { timeoutMs: 1_000, retry: { maxAttempts: 1 }, quotaMaxWaitMs: 0 };
    const paused = { pauseAfterFailure: true };

    // Two pages at once: one call, failing, and both get nothing.
    expect(await Promise.all([counting.currencies(access, once, paused), counting.currencies(access, once, paused)])).toEqual([null, null]);
    expect(calls).toBe(1);
    // Asked again within the pause: no call, unless the caller does not pause (a merchant's save).
    vi.setSystemTime(Date.now() + CURRENCIES_FAILURE_PAUSE_MS - 1_000);
    expect(await counting.currencies(access, once, paused)).toBeNull();
    expect(calls).toBe(1);
    expect(await counting.currencies(access, once)).toBeNull();
    expect(calls).toBe(2);
    // After it, the gateway is asked again, and its list is held.
    failing = false;
    vi.setSystemTime(Date.now() + CURRENCIES_FAILURE_PAUSE_MS + 2_000);
    const coins = await counting.currencies(access, once, paused);
    expect(coins?.length).toBeGreaterThan(0);
    expect(calls).toBe(3);
    expect(await counting.currencies(access, once, { askIf: async () => false })).toEqual(coins);
    expect(calls).toBe(3);
  } finally {
    vi.useRealTimers();
  }
});

it("keeps no client, key or secret of credentials once a read sees them removed", () => {
  const shop = shopWith("ab".repeat(32));
  const before = directory.forShop(shop, "sandbox");
  expect(before).not.toBeNull();
  expect(directory.forShop({ ...shop, sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null }, "sandbox")).toBeNull();
  // The same sealed pair again (a stale row read by another request) is decrypted afresh: nothing was held for it.
  const after = directory.forShop(shop, "sandbox");
  expect(after?.secretKeyHex).toBe("ab".repeat(32));
  expect(after).not.toBe(before);
});

it("decrypts again credentials left unused for half an hour, and keeps those in use", () => {
  vi.useFakeTimers({ now: new Date("2026-05-01T10:00:00Z"), toFake: ["Date"] });
  try {
    const timed = createGatewayDirectory({ cipher, baseUrls: { live: "http://127.0.0.1:9/api/v1", sandbox: "http://127.0.0.1:9/api/v1" }, quotaStore: createMemoryQuotaStore(), logger: createLogger({ sink: () => undefined }) });
    const idle = shopWith("a1".repeat(32));
    const busy = { ...shopWith("b2".repeat(32)), id: "shop-2" };
    busy.sandboxDeviceKeyEnc = cipher.encrypt("5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13", credentialContext(busy.id, "sandbox", "device-key"));
    busy.sandboxSecretKeyEnc = cipher.encrypt("b2".repeat(32), credentialContext(busy.id, "sandbox", "secret-key"));
    const idleFirst = timed.forShop(idle, "sandbox");
    const busyFirst = timed.forShop(busy, "sandbox");
    for (let minute = 1; minute <= 31; minute++) {
      vi.advanceTimersByTime(60_000);
      expect(timed.forShop(busy, "sandbox")).toBe(busyFirst);
    }
    const idleAgain = timed.forShop(idle, "sandbox");
    expect(idleAgain?.secretKeyHex).toBe("a1".repeat(32));
    expect(idleAgain).not.toBe(idleFirst);
  } finally {
    vi.useRealTimers();
  }
});
