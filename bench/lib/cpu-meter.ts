// Where the machine's CPU time goes during a load: the whole machine (from /proc/stat) and the
// processes that serve it (from /proc/<pid>/stat: user + system time, every thread included),
// PostgreSQL's processes found by name. Read before and after each round, so a load's CPU cost
// per request can be told apart by part, and compared with what the cores can give. Linux only:
// elsewhere `snapshot` returns null and the figures are left out.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

/** Named processes to account for; "PostgreSQL" is added by name when `postgres` is true. */
export interface CpuParts {
  pids: Record<string, number>;
  postgres: boolean;
}

export interface CpuSnapshot {
  atMs: number;
  /** The machine over all its cores, in ms: busy (user, nice, system, interrupts, steal) and all. */
  machine: { busyMs: number; totalMs: number; stealMs: number };
  /** CPU ms each part has used since it started. */
  parts: Record<string, number>;
  /**
   * CPU ms of each PostgreSQL process by pid. A connection the pool closes between two
   * snapshots takes its lifetime CPU out of any sum, so PostgreSQL's share of an interval is
   * added up per process: what each process alive at the end spent since the start (all of
   * it for one started since). A process gone by the end counts for nothing: pools close
   * connections that sat idle (10 s), which did no work in the interval's last seconds.
   */
  postgres?: Record<number, number>;
}

/** CPU used over an interval, in ms, by part; `rest` is the machine's busy time no part accounts for (the kernel's network work among it). */
export interface CpuSpent {
  wallMs: number;
  cores: number;
  machineBusyMs: number;
  machineTotalMs: number;
  stealMs: number;
  parts: Record<string, number>;
  restMs: number;
}

let ticksPerSecond: number | null = null;
function msPerTick(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return 1000 / ticksPerSecond;
}

/**
 * utime + stime in clock ticks from a `/proc/<pid>/stat` line. The command name (2nd field) is in
 * parentheses and may hold spaces and parentheses, so the fields are counted from its last ")".
 */
export function statTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is the state (the line's 3rd field): utime is the 14th field, stime the 15th.
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (!Number.isFinite(ticks)) throw new Error(`not a /proc/<pid>/stat line: ${stat.slice(0, 80)}`);
  return ticks;
}

/** utime + stime of one process, in ms; null when it is gone. */
function processMs(pid: number): number | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  return statTicks(stat) * msPerTick();
}

function postgresPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") pids.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return pids;
}

export function snapshot(parts: CpuParts): CpuSnapshot | null {
  let line: string;
  try {
    line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!;
  } catch {
    return null;
  }
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is already in user).
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number) as number[];
  const tick = msPerTick();
  const busy = user! + nice! + system! + irq! + softirq! + steal!;
  const measured: Record<string, number> = {};
  for (const [name, pid] of Object.entries(parts.pids)) measured[name] = processMs(pid) ?? 0;
  let postgres: Record<number, number> | undefined;
  if (parts.postgres) {
    postgres = {};
    for (const pid of postgresPids()) {
      const ms = processMs(pid);
      if (ms !== null) postgres[pid] = ms;
    }
  }
  return { atMs: performance.now(), machine: { busyMs: busy * tick, totalMs: (busy + idle! + iowait!) * tick, stealMs: steal! * tick }, parts: measured, ...(postgres ? { postgres } : {}) };
}

export function spent(before: CpuSnapshot, after: CpuSnapshot): CpuSpent {
  const parts: Record<string, number> = {};
  for (const name of Object.keys(after.parts)) parts[name] = Math.max(0, after.parts[name]! - (before.parts[name] ?? 0));
  if (after.postgres) {
    const earlier = before.postgres ?? {};
    parts["PostgreSQL"] = Object.entries(after.postgres).reduce((sum, [pid, ms]) => sum + Math.max(0, ms - (earlier[Number(pid)] ?? 0)), 0);
  }
  const machineBusyMs = after.machine.busyMs - before.machine.busyMs;
  return {
    wallMs: after.atMs - before.atMs,
    cores: availableParallelism(),
    machineBusyMs,
    machineTotalMs: after.machine.totalMs - before.machine.totalMs,
    stealMs: after.machine.stealMs - before.machine.stealMs,
    parts,
    restMs: Math.max(0, machineBusyMs - Object.values(parts).reduce((sum, v) => sum + v, 0)),
  };
}

/** Several intervals as one. */
export function added(intervals: readonly CpuSpent[]): CpuSpent | null {
  if (intervals.length === 0) return null;
  const sum = (pick: (s: CpuSpent) => number) => intervals.reduce((total, s) => total + pick(s), 0);
  const parts: Record<string, number> = {};
  for (const s of intervals) for (const [name, ms] of Object.entries(s.parts)) parts[name] = (parts[name] ?? 0) + ms;
  return {
    wallMs: sum((s) => s.wallMs),
    cores: intervals[0]!.cores,
    machineBusyMs: sum((s) => s.machineBusyMs),
    machineTotalMs: sum((s) => s.machineTotalMs),
    stealMs: sum((s) => s.stealMs),
    parts,
    restMs: sum((s) => s.restMs),
  };
}

/** CPU ms per request by part, the machine's busy share, and the requests per second its cores could serve at that cost. */
export interface CpuPerRequest {
  requests: number;
  busyPercent: number;
  stealPercent: number;
  machineMs: number;
  parts: Record<string, number>;
  restMs: number;
  /** cores x 1000 / machineMs: the rate at which the cores would be all busy. */
  ceilingPerSec: number;
}

export function perRequest(total: CpuSpent, requests: number): CpuPerRequest {
  const per = (ms: number) => Math.round((ms / Math.max(1, requests)) * 1000) / 1000;
  const parts: Record<string, number> = {};
  for (const [name, ms] of Object.entries(total.parts)) parts[name] = per(ms);
  const machineMs = per(total.machineBusyMs);
  return {
    requests,
    busyPercent: Math.round((1000 * total.machineBusyMs) / Math.max(1, total.machineTotalMs)) / 10,
    stealPercent: Math.round((1000 * total.stealMs) / Math.max(1, total.machineTotalMs)) / 10,
    machineMs,
    parts,
    restMs: per(total.restMs),
    ceilingPerSec: machineMs > 0 ? Math.round((total.cores * 1000) / machineMs) : 0,
  };
}

/** One line: CPU ms per request, by part, and how busy the machine was. */
export function describeCpu(cpu: CpuPerRequest): string {
  const parts = Object.entries(cpu.parts).map(([name, ms]) => `${name} ${ms}`).join(", ");
  return `${cpu.machineMs} ms (${parts}, rest ${cpu.restMs}); machine ${cpu.busyPercent}% busy, steal ${cpu.stealPercent}%, ceiling ${cpu.ceilingPerSec}/s`;
}
