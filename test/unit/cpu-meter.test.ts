// The benchmark's CPU accounting (bench/lib/cpu-meter.ts): reading a process's CPU ticks from its
// /proc stat line, and turning intervals into CPU per request.
import { describe, expect, it } from "vitest";
import { added, perRequest, statTicks, type CpuSpent } from "../../bench/lib/cpu-meter";

// A real line's shape (proc(5)): pid, (comm), state, then ppid … utime (14th) stime (15th) …
const line = (comm: string, utime: number, stime: number) =>
  `4242 (${comm}) S 1 4242 4242 0 -1 4194560 6402 0 12 0 ${utime} ${stime} 0 0 20 0 11 0 1234567 1130000000 52000 18446744073709551615 1 1 0 0 0 0 0 4096 134234626 0 0 0 17 1 0 0 0 0 0`;

describe("statTicks", () => {
  it("adds user and system ticks", () => {
    expect(statTicks(line("node", 310, 42))).toBe(352);
  });

  it("counts fields from the command name's last parenthesis, whatever the name holds", () => {
    expect(statTicks(line("postgres: app (idle) 1 2 3", 7, 5))).toBe(12);
  });

  it("refuses a line that is not a stat line", () => {
    expect(() => statTicks("no such thing")).toThrow(/not a \/proc/);
  });
});

describe("perRequest", () => {
  const interval = (busy: number, total: number, parts: Record<string, number>): CpuSpent => ({
    wallMs: total / 2,
    cores: 2,
    machineBusyMs: busy,
    machineTotalMs: total,
    stealMs: 0,
    parts,
    restMs: busy - Object.values(parts).reduce((sum, v) => sum + v, 0),
  });

  it("divides two rounds' CPU by the requests answered and gives the rate that would fill the cores", () => {
    const total = added([interval(900, 2000, { server: 500, sandbox: 300 }), interval(1100, 2000, { server: 600, sandbox: 400 })])!;
    const per = perRequest(total, 400);
    expect(per).toEqual({ requests: 400, busyPercent: 50, stealPercent: 0, machineMs: 5, parts: { server: 2.75, sandbox: 1.75 }, restMs: 0.5, ceilingPerSec: 400 });
  });

  it("has nothing to add when nothing was measured", () => {
    expect(added([])).toBeNull();
  });
});
