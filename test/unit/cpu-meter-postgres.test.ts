// The benchmark's PostgreSQL CPU (bench/lib/cpu-meter.ts) over an interval in which a backend
// exits: the app's and the bare door's pg pools close connections idle for 10 s, and a sum of
// the lifetime CPU of the processes alive at each snapshot lost the closed one's whole history,
// down to 0 for the interval. It is added up per process instead. Linux only, like the meter.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { snapshot, spent } from "../../bench/lib/cpu-meter";

const linux = process.platform === "linux";

/** A process whose /proc comm is "postgres" (a node started through a symlink of that name), once it has used `burnMs` of CPU. */
function fakePostgres(dir: string, burnMs: number): Promise<ChildProcess> {
  // Burns CPU time, not wall time: on a busy machine the process gets less CPU than it waits.
  const script = `const start = process.cpuUsage(); const used = () => { const u = process.cpuUsage(start); return (u.user + u.system) / 1000; }; while (used() < ${burnMs}) {} process.stdout.write("burnt\\n"); setInterval(() => {}, 1e6);`;
  const child = spawn(join(dir, "postgres"), ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.stdout!.once("data", () => resolve(child));
    child.once("error", reject);
  });
}

describe.runIf(linux)("cpu-meter: PostgreSQL CPU when a backend exits during the interval", () => {
  const dir = mkdtempSync(join(tmpdir(), "cpu-meter-postgres-"));
  symlinkSync(process.execPath, join(dir, "postgres"));
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) c.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts the CPU a 'postgres' process spends in the interval even when another one exits meanwhile", async () => {
    // An idle backend with CPU history (a pooled connection that did earlier work).
    const old = await fakePostgres(dir, 600);
    children.push(old);
    const before = snapshot({ pids: {}, postgres: true })!;
    // During the interval: the old backend is closed by the pool, another one does ~300 ms of work.
    const gone = new Promise((resolve) => old.once("exit", resolve));
    old.kill("SIGKILL");
    await gone;
    const worker = await fakePostgres(dir, 300);
    children.push(worker);
    const after = snapshot({ pids: {}, postgres: true })!;
    const interval = spent(before, after);
    // At least the ~300 ms burnt by the process that did the interval's work.
    expect(interval.parts["PostgreSQL"]).toBeGreaterThanOrEqual(250);
  });
});
