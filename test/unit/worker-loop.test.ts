// The background loops' timing: a wake never runs the pass inside the caller's turn (the
// request that stored the work answers first), wakes close together make one pass, a wake
// during a pass makes exactly one more (one as the pass is ending too), a full batch is followed
// by another pass at once, passes asked for from outside add no schedule, and a stopped loop
// runs nothing.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "~/lib/logger.server";
import { startLoop, WAKE_DELAY_MS, type Loop } from "~/workers.server";

const INTERVAL_MS = 60_000;

describe("worker loop", () => {
  let loop: Loop | undefined;
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(async () => {
    await loop?.stop();
    loop = undefined;
    vi.useRealTimers();
  });

  /** A pass that stays in flight until released. */
  function controlledPass() {
    const started: (() => void)[] = [];
    const pass = vi.fn(() => new Promise<void>((resolve) => started.push(resolve)));
    return { pass, finishAll: () => started.splice(0).forEach((finish) => finish()) };
  }

  async function startIdle(pass: () => Promise<boolean | void>): Promise<Loop> {
    const started = startLoop("test", INTERVAL_MS, pass, silentLogger);
    // The first pass runs at once; let it end so the loop is idle until its interval.
    await vi.advanceTimersByTimeAsync(0);
    return started;
  }

  it("runs a woken pass after the caller's turn, once for several wakes close together", async () => {
    const { pass, finishAll } = controlledPass();
    loop = await startIdle(pass);
    expect(pass).toHaveBeenCalledTimes(1);
    finishAll();
    await vi.advanceTimersByTimeAsync(0);

    loop.wake();
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS - 1);
    loop.wake();
    loop.wake();
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(pass).toHaveBeenCalledTimes(2);
    finishAll();
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS * 10);
    expect(pass).toHaveBeenCalledTimes(2);
  });

  it("a steady stream of wakes does not postpone the pass", async () => {
    const { pass, finishAll } = controlledPass();
    loop = await startIdle(pass);
    finishAll();
    await vi.advanceTimersByTimeAsync(0);
    for (let ms = 0; ms < WAKE_DELAY_MS; ms++) {
      loop.wake();
      await vi.advanceTimersByTimeAsync(1);
    }
    expect(pass).toHaveBeenCalledTimes(2);
    finishAll();
  });

  it("a wake during a pass makes exactly one more pass when it ends", async () => {
    const { pass, finishAll } = controlledPass();
    loop = await startIdle(pass);
    expect(pass).toHaveBeenCalledTimes(1);
    loop.wake();
    loop.wake();
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS * 2);
    expect(pass).toHaveBeenCalledTimes(1);
    finishAll();
    await vi.advanceTimersByTimeAsync(0);
    expect(pass).toHaveBeenCalledTimes(2);
    finishAll();
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS * 10);
    expect(pass).toHaveBeenCalledTimes(2);
  });

  it("without wakes, passes follow the interval", async () => {
    const pass = vi.fn(async () => undefined);
    loop = await startIdle(pass);
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(pass).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(pass).toHaveBeenCalledTimes(2);
  });

  it("a pass that took a full batch is followed by another at once, until one does not", async () => {
    // Three full batches of backlog, then a pass that finds less.
    let backlog = 3;
    const pass = vi.fn(async () => backlog-- > 0);
    loop = startLoop("test", INTERVAL_MS, pass, silentLogger);
    await vi.advanceTimersByTimeAsync(0);
    expect(pass).toHaveBeenCalledTimes(4);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS - 1);
    expect(pass).toHaveBeenCalledTimes(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(pass).toHaveBeenCalledTimes(5);
  });

  it("a wake pending when the loop stops never runs", async () => {
    const pass = vi.fn(async () => undefined);
    loop = await startIdle(pass);
    loop.wake();
    await loop.stop();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS * 2);
    expect(pass).toHaveBeenCalledTimes(1);
  });

  it("a wake that comes as a pass is ending (after its last look for more work) runs a pass at once, not after the interval", async () => {
    let passes = 0;
    let woke = false;
    const started = startLoop(
      "test",
      INTERVAL_MS,
      async () => {
        passes++;
        if (woke) return;
        woke = true;
        // Two microtasks on: the pass has returned and the loop has checked for more work, but
        // has not yet set its next timer.
        queueMicrotask(() => queueMicrotask(() => started.wake()));
      },
      silentLogger,
    );
    loop = started;
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS * 2);
    expect(passes).toBe(2);
  });

  it("passes asked for from outside add no schedule of their own: the interval stays one, and nothing runs after stop", async () => {
    const pass = vi.fn(async () => undefined);
    loop = await startIdle(pass);
    for (let i = 0; i < 5; i++) await loop.pass();
    expect(pass).toHaveBeenCalledTimes(6);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(pass).toHaveBeenCalledTimes(7);
    await loop.stop();
    await loop.pass();
    await vi.advanceTimersByTimeAsync(INTERVAL_MS * 3);
    expect(pass).toHaveBeenCalledTimes(7);
  });

  it("a pass asked for from outside while a wake waits its few milliseconds keeps the wake, and later wakes still run", async () => {
    const pass = vi.fn(async () => {});
    loop = await startIdle(pass);
    loop.wake();
    // Asked for before the wake's timer fires, and over at once: its end replaces that timer.
    await loop.pass();
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS);
    const afterBoth = pass.mock.calls.length;
    expect(afterBoth).toBe(3);
    // A wake after that runs a pass within its few milliseconds, not at the interval.
    loop.wake();
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS);
    expect(pass).toHaveBeenCalledTimes(afterBoth + 1);
  });

  it("a failing pass does not stop the loop", async () => {
    const pass = vi.fn(async () => {
      throw new Error("database unavailable");
    });
    loop = await startIdle(pass);
    loop.wake();
    await vi.advanceTimersByTimeAsync(WAKE_DELAY_MS);
    expect(pass).toHaveBeenCalledTimes(2);
  });
});
