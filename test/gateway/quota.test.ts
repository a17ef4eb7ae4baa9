import { describe, expect, it } from "vitest";
import { createMemoryQuotaStore, DEFAULT_QUOTA_LIMITS, hashDeviceKey } from "../../app/gateway/quota";

const t0 = new Date("2026-04-17T10:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

describe("memory quota store", () => {
  it("defaults to the service's throttles", () => {
    expect(DEFAULT_QUOTA_LIMITS).toEqual({ generalPerMinute: 60, generalPerDay: 2000, criticalPerMinute: 15, criticalPerDay: 200 });
  });

  it("allows 60 general calls a minute, then says when the next slot frees", async () => {
    const store = createMemoryQuotaStore();
    for (let i = 0; i < 60; i += 1) expect(await store.take("k", "general", at(i * 100))).toEqual({ ok: true });
    expect(await store.take("k", "general", at(6_000))).toEqual({ ok: false, retryAt: at(60_000), window: "general_minute" });
    // the window slides: the first call ages out exactly one minute after it was made
    expect(await store.take("k", "general", at(59_999))).toMatchObject({ ok: false });
    expect(await store.take("k", "general", at(60_000))).toEqual({ ok: true });
  });

  it("critical calls also count against the general budget, cumulatively", async () => {
    const store = createMemoryQuotaStore();
    for (let i = 0; i < 15; i += 1) expect((await store.take("k", "critical", t0)).ok).toBe(true);
    expect(await store.take("k", "critical", t0)).toEqual({ ok: false, retryAt: at(60_000), window: "critical_minute" });
    expect(await store.remaining("k", t0)).toEqual({ general: { minute: 45, day: 1985 }, critical: { minute: 0, day: 185 } });
    expect((await store.take("k", "general", t0)).ok).toBe(true);
  });

  it("takes back a call given back (a prepared order never sent), in both windows of a critical call, and only one", async () => {
    const store = createMemoryQuotaStore({ generalPerMinute: 5, criticalPerMinute: 2 });
    const t0 = new Date("2026-11-22T12:00:00.123Z");
    const at = (ms: number) => new Date(t0.getTime() + ms);
    expect(await store.take("k", "critical", at(0))).toEqual({ ok: true });
    expect(await store.take("k", "critical", at(7))).toEqual({ ok: true });
    expect((await store.remaining("k", at(8))).critical.minute).toBe(0);
    await store.giveBack!("k", "critical", at(7));
    expect(await store.remaining("k", at(8))).toMatchObject({ general: { minute: 4 }, critical: { minute: 1 } });
    await store.giveBack!("k", "critical", at(3));
    expect((await store.remaining("k", at(8))).critical.minute).toBe(1);
  });

  it("a refused call records nothing", async () => {
    const store = createMemoryQuotaStore({ criticalPerMinute: 1 });
    await store.take("k", "critical", t0);
    await store.take("k", "critical", t0);
    await store.take("k", "critical", t0);
    expect((await store.remaining("k", t0)).general.minute).toBe(59);
  });

  it("the day window outranks a minute window and fails with the day's retry time", async () => {
    const store = createMemoryQuotaStore({ generalPerMinute: 2, generalPerDay: 3 });
    await store.take("k", "general", at(0));
    await store.take("k", "general", at(120_000));
    await store.take("k", "general", at(120_001));
    expect(await store.take("k", "general", at(120_002))).toEqual({ ok: false, retryAt: at(86_400_000), window: "general_day" });
    expect((await store.take("k", "general", at(86_400_000))).ok).toBe(true);
  });

  it("the critical day budget is 200", async () => {
    const store = createMemoryQuotaStore({ criticalPerMinute: 1_000, generalPerMinute: 1_000 });
    for (let i = 0; i < 200; i += 1) expect((await store.take("k", "critical", at(i))).ok).toBe(true);
    expect(await store.take("k", "critical", at(500))).toEqual({ ok: false, retryAt: at(86_400_000), window: "critical_day" });
    expect((await store.take("k", "general", at(500))).ok).toBe(true);
  });

  it("keys are independent", async () => {
    const store = createMemoryQuotaStore({ generalPerMinute: 1 });
    expect((await store.take("a", "general", t0)).ok).toBe(true);
    expect((await store.take("b", "general", t0)).ok).toBe(true);
    expect((await store.take("a", "general", t0)).ok).toBe(false);
  });

  it("remaining leaves no room in the minute of a class the gateway holds (its 429), and all of it after", async () => {
    const store = createMemoryQuotaStore();
    store.holdUntil("held", new Date(t0.getTime() + 30_000));
    store.holdUntil("creations", new Date(t0.getTime() + 30_000), "critical");
    expect(await store.remaining("held", t0)).toEqual({ general: { minute: 0, day: 2000 }, critical: { minute: 0, day: 200 } });
    expect(await store.remaining("creations", t0)).toEqual({ general: { minute: 60, day: 2000 }, critical: { minute: 0, day: 200 } });
    expect(await store.remaining("held", new Date(t0.getTime() + 30_000))).toEqual({ general: { minute: 60, day: 2000 }, critical: { minute: 15, day: 200 } });
  });

  it("remaining starts full", async () => {
    expect(await createMemoryQuotaStore().remaining("new", t0)).toEqual({
      general: { minute: 60, day: 2000 },
      critical: { minute: 15, day: 200 },
    });
  });
});

describe("hashDeviceKey", () => {
  it("is stable, distinct per key, and does not contain the key", () => {
    const key = "1b0b2c3d-0000-4000-8000-00000000abcd";
    expect(hashDeviceKey(key)).toBe(hashDeviceKey(key));
    expect(hashDeviceKey(key)).not.toBe(hashDeviceKey(`${key}x`));
    expect(hashDeviceKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashDeviceKey(key)).not.toContain("abcd");
  });
});
