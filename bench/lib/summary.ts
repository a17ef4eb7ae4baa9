// Prints a run's figures as Markdown tables (the form BENCHMARKS.md uses).
import type { DbResults } from "../run";
import type { CpuPerRequest } from "./cpu-meter";
import type { QuotaDaySummary } from "./quota-day-summary";
import { round } from "./stats";

type Report = {
  machine: { nproc: number; node: string; cpu: string };
  loadAverages: Record<string, number[]>;
  results: Partial<Record<string, DbResults>>;
  skipped: Partial<Record<string, string>>;
  day?: QuotaDaySummary | undefined;
};

const row = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
const yes = (ok: boolean) => (ok ? "met" : "**missed**");

/**
 * CPU per request by part, the app's stack against the bare one's ("server" is the app or the
 * bare server; the rest is the kernel's work and other processes), and the rate at which each
 * would keep every core busy.
 */
function cpuTable(log: (line: string) => void, heads: [string, ...string[]], rows: { cells: (string | number)[]; app: CpuPerRequest; bare: CpuPerRequest }[]): void {
  if (rows.length === 0) return;
  const names = [...new Set(rows.flatMap((r) => [...Object.keys(r.app.parts), ...Object.keys(r.bare.parts)]))];
  const pair = (a: number | undefined, b: number | undefined) => `${a ?? "-"} / ${b ?? "-"}`;
  const labels = heads.slice(0, -1);
  const side = heads.at(-1)!;
  log("");
  log(row([...labels, `whole machine (${side})`, ...names, "rest", "machine busy %", "cores' ceiling /s"]));
  log(row(Array(labels.length + names.length + 4).fill("---")));
  for (const r of rows) {
    log(
      row([
        ...r.cells,
        pair(r.app.machineMs, r.bare.machineMs),
        ...names.map((name) => pair(r.app.parts[name], r.bare.parts[name])),
        pair(r.app.restMs, r.bare.restMs),
        pair(r.app.busyPercent, r.bare.busyPercent),
        pair(r.app.ceilingPerSec, r.bare.ceilingPerSec),
      ]),
    );
  }
}

export function printSummary(report: Report, log: (line: string) => void): void {
  log("");
  log(`Machine: ${report.machine.nproc} cores (${report.machine.cpu}), Node ${report.machine.node}; load average (1/5/15 min) ${Object.entries(report.loadAverages).map(([k, v]) => `${k} ${v.join("/")}`).join(", ")}`);
  for (const [kind, reason] of Object.entries(report.skipped)) log(`${kind}: ${reason}`);
  for (const [kind, r] of Object.entries(report.results)) {
    if (!r) continue;
    log("");
    log(`### ${kind === "sqlite" ? "SQLite" : "PostgreSQL"}`);
    const servings = (["prebuilt", "vite"] as const).filter((s) => r[s]?.sessions);
    if (servings.length) {
      log("");
      log(row(["app served", "concurrency", "app p50 / p99 ms", "app req/s", "bare proxy p50 / p99 ms", "bare req/s", "added p50 / p99 ms", "ratio p50 / p99", "target"]));
      log(row(Array(9).fill("---")));
      for (const serving of servings) {
        for (const l of r[serving]!.sessions!.levels) {
          log(
            row([
              serving,
              l.concurrency,
              `${l.app.latencyMs.p50} / ${l.app.latencyMs.p99}`,
              l.app.throughputPerSec,
              `${l.bareProxy.latencyMs.p50} / ${l.bareProxy.latencyMs.p99}`,
              l.bareProxy.throughputPerSec,
              `${l.addedMs.p50} / ${l.addedMs.p99}`,
              `${l.ratio.p50} / ${l.ratio.p99}`,
              yes(l.meetsTarget),
            ]),
          );
        }
      }
      cpuTable(
        log,
        ["CPU ms per session (app served)", "concurrency", "app / bare proxy"],
        servings.flatMap((serving) => r[serving]!.sessions!.levels.flatMap((l) => (l.cpu ? [{ cells: [serving, l.concurrency], app: l.cpu.app, bare: l.cpu.bareProxy }] : []))),
      );
      for (const serving of servings) {
        const p = r[serving]!.sessions!.profile;
        log("");
        log(
          `In process (${serving}): a session takes p50 ${p.inProcessMs.p50} ms: ${p.perSession.dbQueries} queries ${p.perSession.dbMs} ms, ` +
            `the gateway call ${p.perSession.gatewayHttpMs} ms, the rest ${p.perSession.otherMs} ms. A committed single-row write of plain SQL takes ` +
            `p50 ${p.durableWrite.backToBackMs.p50} ms here back to back and ${p.durableWrite.afterPauseMs.p50} ms after ${p.durableWrite.pauseMs} ms of quiet (the gateway call's p50); ` +
            `the two a session waits for in turn (the record before the gateway call, the answer after it) put its floor at ${p.durableWrite.floorMs} ms over the gateway call.`,
        );
      }
    }
    const webhooks = r.prebuilt?.webhooks;
    if (webhooks) {
      log("");
      log(row(["webhooks", "answered/s", "answer p50 / p99 ms", "bare door answered/s", "bare door p50 / p99 ms", "ratio p50 / p99", "webhook to resolve p50 / p99 ms", "resolved/s", "answer p99 < 20 ms", "resolve p99 < 1 s"]));
      log(row(Array(10).fill("---")));
      for (const l of webhooks.levels) {
        log(
          row([
            l.concurrency === 0 ? `${l.webhooks} steady (${webhooks.steadyPerSec} per s on average, open loop)` : `${l.webhooks} at concurrency ${l.concurrency}`,
            l.answeredPerSec,
            `${l.answerMs.p50} / ${l.answerMs.p99}`,
            l.bareDoor.answeredPerSec,
            `${l.bareDoor.answerMs.p50} / ${l.bareDoor.answerMs.p99}`,
            `${l.ratio.p50} / ${l.ratio.p99}`,
            l.webhookToResolveMs ? `${l.webhookToResolveMs.p50} / ${l.webhookToResolveMs.p99}${l.missingResolves ? ` (${l.missingResolves} never resolved)` : ""}` : "-",
            l.settledPerSec ?? "-",
            yes(l.meetsTarget.answerP99),
            l.meetsTarget.resolveP99 === null ? "- (workers off)" : yes(l.meetsTarget.resolveP99),
          ]),
        );
      }
      // A nearest-rank p99 of n answers is the ceil(0.99 n)-th smallest: with a few hundred, one of the few slowest.
      const sizes = [...new Set(webhooks.levels.map((l) => l.webhooks))];
      const fromTop = (n: number) => n - Math.ceil(0.99 * n) + 1;
      log("");
      log(`Each p99 is the nearest-rank value of its level's answers: ${sizes.map((n) => `of ${n}, the ${ordinal(fromTop(n))} slowest`).join("; ")}. One or two slow answers move it.`);
      const staged = webhooks.levels.filter((l) => l.stagesMs);
      if (staged.length > 0) {
        log("");
        log(
          `Where the time to resolve went (p50 / p99 ms): ${staged
            .map((l) => `${l.concurrency === 0 ? "steady" : `concurrency ${l.concurrency}`}: stored to settled ${l.stagesMs!.storedToSettled.p50} / ${l.stagesMs!.storedToSettled.p99}, settled to delivered to Shopify ${l.stagesMs!.settledToDelivered.p50} / ${l.stagesMs!.settledToDelivered.p99}`)
            .join("; ")}.`,
        );
      }
      cpuTable(
        log,
        ["CPU ms per webhook", "app: first send to last resolve / bare door: its answers"],
        webhooks.levels.flatMap((l) => (l.cpu ? [{ cells: [l.concurrency === 0 ? "steady" : `concurrency ${l.concurrency}`], app: l.cpu.app, bare: l.cpu.bareDoor }] : [])),
      );
      const c = webhooks.checks;
      log("");
      log(
        webhooks.workers
          ? `Webhook counts: ${c.accepted} answered 200, ${c.stored} stored, ${c.processed} processed, ${c.unprocessed} unprocessed; payments resolved once ${c.paymentsResolvedOnce}, more than once ${c.paymentsResolvedMoreThanOnce}, never ${c.paymentsNotResolved}. Every webhook processed once: ${yes(webhooks.targets.countsOk)}.`
          : `Webhook counts, app workers off (the door alone): ${c.accepted} answered 200, ${c.stored} stored, none processed. Every webhook answered 200 stored: ${yes(webhooks.targets.countsOk)}.`,
      );
    }
    log("");
    log(row(["memory (MiB)", "ready rss", "peak rss", "heap used at end", "outside heap at end"]));
    log(row(Array(5).fill("---")));
    for (const serving of ["prebuilt", "vite"] as const) {
      const s = r[serving];
      if (s?.sessions) {
        const a = s.sessions.appMemory;
        log(row([`app process, sessions (${serving})`, a.readyRssMiB, a.peakRssMiB, a.heapUsedMiB, a.externalMiB]));
      }
      const w = serving === "prebuilt" ? r.prebuilt?.webhooks?.appMemory : undefined;
      if (w) log(row([`app process, webhooks (${serving})`, w.readyRssMiB, w.peakRssMiB, w.heapUsedMiB, w.externalMiB]));
    }
    const d = r.dayProcessMemory;
    if (d) log(row(["simulated-day process (app, sandbox, stand-ins, proxies)", d.readyRssMiB, `${d.peakRssMiB} (maxRSS ${d.maxRssMiB})`, d.heapUsedMiB, d.externalMiB]));
    log(`Seconds: ${JSON.stringify(r.seconds)}`);
  }
  const q = report.day;
  if (!q) return;
  log("");
  log("### Simulated day (gateway quota)");
  log("");
  log(
    `${q.plan.orders} orders at ${q.plan.shops} shops over ${q.plan.simulatedHours} simulated hours (${q.plan.fates.paid} paid, ${q.plan.fates.underpaid} underpaid, ${q.plan.fates.abandoned} abandoned), ${Math.round(q.plan.dropShare * 100)}% of webhooks lost (${q.webhooks.dropped} of ${q.webhooks.arrived}); shops ${q.parts.map((p) => `${p.shops.join(",")} on ${p.database}`).join(", ")}.`,
  );
  log("");
  log(row(["", "app", "naive polling (1/min per open order)"]));
  log(row(["---", "---", "---"]));
  log(row(["gateway calls", q.app.calls, q.naive.calls]));
  log(row(["calls per order", q.app.callsPerOrder, q.naive.callsPerOrder]));
  log(row(["peak calls per device in any 60 s (limit 60)", q.app.peakPerDeviceMinute, q.naive.peakPerDeviceMinute]));
  log(row(["429 answers", q.app.status429, "-"]));
  log("");
  log(
    `App calls by endpoint ${JSON.stringify(q.app.byEndpoint)}, by cause ${JSON.stringify(q.app.byCause)}. Settled ${q.settled.settled}/${q.settled.orders} (${q.settled.asExpected} as expected): ${q.settled.byWebhook} by webhook, ${q.settled.byReconciler} by the reconciler. Gateway final to Shopify final (simulated s): p50 ${q.gatewayFinalToShopifySimSeconds.p50}, p99 ${q.gatewayFinalToShopifySimSeconds.p99}, max ${q.gatewayFinalToShopifySimSeconds.max}. Targets: < ${q.targets.callsPerOrder} calls per order ${yes(q.targets.callsPerOrderMet)}; every order settled ${yes(q.targets.everyOrderSettled)}; no 429 ${yes(q.targets.no429)}; peak within 60/min ${yes(q.targets.peakWithinLimit)}.`,
  );
  const answer = (read: "listing" | "order" | "none", what: string) => {
    const a = q.returnAnswerMs[read];
    return a.count === 0 ? `${what} none` : `${what} ${a.count} (p50 ${a.p50}, p99 ${a.p99}, max ${a.max} ms)`;
  };
  const baseline = q.returnAnswerMs.none.p50;
  const ratio = (read: "listing" | "order") => (baseline > 0 && q.returnAnswerMs[read].count > 0 ? ` ${round(q.returnAnswerMs[read].p50 / baseline)}x` : "");
  log(
    `Shoppers' returns answered (real ms): ${answer("listing", "listing the shop's orders")}, ${answer("order", "reading their own order")}, ${answer("none", "reading nothing")}; p50 against those reading nothing:${ratio("listing") || " -"} listing,${ratio("order") || " -"} own order.`,
  );
  for (const p of q.parts) {
    log(`Part on ${p.database}: shops ${p.shops.join(",")}, ${p.orders} orders, ${p.calls} calls, reconciler passes ${p.reconcilerPasses.run} (+${p.reconcilerPasses.skippedWithNothingDue} with nothing due), ${p.realSeconds} s real, ${p.cpuSeconds} s CPU${p.problems.length ? `; problems: ${p.problems.join("; ")}` : ""}`);
  }
}

function ordinal(n: number): string {
  return n === 1 ? "very" : n === 2 ? "2nd" : n === 3 ? "3rd" : `${n}th`;
}
