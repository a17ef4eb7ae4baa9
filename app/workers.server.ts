// The background workers of one app instance: the outbox (calls to Shopify), the webhook
// inbox, the reconciler, the retention purge and the shops' readiness in Shopify. Started
// once by the server entry (and by the worker thread, server/worker-thread.ts, when the
// workers run there), never from a route module.
// Each loop runs one pass at a time, wakes early when new work is stored, and stops
// gracefully (the pass in flight finishes).
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { settledWithin } from "./lib/deadline";
import type { Logger } from "./lib/logger.server";
import type { AppServices } from "./services.server";
import { deliveryPass } from "./payments/outbox";
import { processWebhookInbox } from "./payments/process-webhooks";
import { reconcileOnce } from "./payments/reconcile";
import { purgeExpiredRows } from "./payments/retention";
import { keepOfflineTokensAlive, syncReadinessOfInstalledShops } from "./shops/onboarding.server";
import { recordDeviceKeyHashes } from "./shops/shop-credentials.server";
import { recheckUnconfirmedUninstalls } from "./shops/shopify-webhooks.server";

export interface Workers {
  stop(): Promise<void>;
  /**
   * Runs one pass of the inbox, the reconciler and the outbox now (for tests and the "check
   * now" button). Not the retention purge: nothing waiting on these passes depends on it.
   */
  runOnce(): Promise<void>;
}

/** How long a wake waits before the pass starts (see Loop.wake). */
export const WAKE_DELAY_MS = 5;

export interface Loop {
  stop(): Promise<void>;
  wake(): void;
  pass(): Promise<void>;
}

/**
 * A loop that runs `pass` every `intervalMs` after the previous pass ends, soon after a wake,
 * and at once again when the pass says it may have left due work behind (it resolved to true:
 * it took a full batch), so a backlog is worked off without waiting for the interval.
 */
export function startLoop(name: string, intervalMs: number, pass: () => Promise<boolean | void>, logger: Logger): Loop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  let woken = false;
  /**
   * The one timer of the loop, which runs a pass: a new one replaces any still pending, so a
   * pass asked for from outside adds no schedule of its own. A wake whose timer it replaces is
   * kept: the new timer fires within the wake's few milliseconds, and its pass answers the wake.
   */
  const schedule = (delayMs: number) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      woken = false;
      void run();
    }, woken ? Math.min(delayMs, WAKE_DELAY_MS) : delayMs);
  };
  const run = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          if ((await pass()) === true) again = true;
        } catch (error) {
          logger.error(`${name} pass failed`, { error });
        }
      } while (again && !stopped);
    })().finally(() => {
      running = null;
      // A wake that came as the last pass was ending (after its check of `again`) runs at once,
      // not after the interval.
      if (!stopped) schedule(again ? 0 : intervalMs);
    });
    return running;
  };
  schedule(0);
  return {
    wake() {
      if (stopped || woken) return;
      if (running) {
        again = true;
        return;
      }
      // Never inside the caller's turn: the request that stored the work answers first, and
      // the wakes of the next few milliseconds join this pass instead of postponing it.
      woken = true;
      schedule(WAKE_DELAY_MS);
    },
    pass: run,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/**
 * How long stopping the workers may take: the passes in flight finish, but their end is not
 * waited for beyond this (a Shopify call hanging to its timeout, a gateway read retried). What
 * they still hold then is taken over once its claim lapses, by another instance or this one
 * started again. With the connections' drain alongside (server/app.ts), shutdown ends before
 * server/main.ts's forced exit.
 */
export const WORKERS_STOP_ALLOWANCE_MS = 20_000;

/**
 * How long stopping waits, after the workers' allowance, for a Shopify token renewal still
 * under way (a delivery's, after Shopify refused an expired token) to store its new pair: the
 * refresh grant spent the shop's refresh token, and a pair lost with the process would leave
 * the shop with no working token until the merchant opens the app. A grant is answered in well
 * under a second; with the allowance, still before server/main.ts's forced exit.
 */
export const RENEWALS_STOP_WAIT_MS = 3_000;

/** Messages one outbox pass takes, webhooks one inbox pass takes; a full batch is followed by another pass at once. */
const OUTBOX_BATCH = 50;
const INBOX_BATCH = 100;
/**
 * The retention purge runs hourly (a pass with nothing due is one short statement per table),
 * and at once again while a backlog is left. Every instance runs it: its deletions are by
 * condition, and on PostgreSQL skip the rows another instance is deleting (app/payments/retention.ts).
 */
const RETENTION_INTERVAL_MS = 3_600_000;
/**
 * How often the shops' readiness in Shopify is checked against whether their credentials can
 * be read (an encryption key dropped too early, then put back); also once at start-up, and
 * when a payment session finds a shop's credentials unreadable. The same pass renews the
 * offline tokens whose refresh token is running out, and brings the digests that tell which
 * shops share a device in line with their credentials (recordDeviceKeyHashes), and asks Shopify
 * again about the uninstalls and shop redactions it could not confirm when they came, once an
 * hour each (recheckUnconfirmedUninstalls).
 */
const READINESS_INTERVAL_MS = 10 * 60_000;

export function startWorkers(services: AppServices, options: { stopAllowanceMs?: number; renewalsWaitMs?: number } = {}): Workers {
  const worker = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  let stopping = false;
  const outbox = startLoop(
    "outbox",
    services.env.OUTBOX_INTERVAL_MS,
    async () => {
      // Once stopping, the pass starts no more calls: the ones it holds go back, for whoever runs next.
      const { more } = await deliveryPass(services, { worker, limit: OUTBOX_BATCH, concurrency: services.env.OUTBOX_CONCURRENCY, stopping: () => stopping });
      return more;
    },
    services.logger,
  );
  const inbox = startLoop(
    "inbox",
    Math.max(250, services.env.OUTBOX_INTERVAL_MS),
    async () => {
      const result = await processWebhookInbox(services, { worker, limit: INBOX_BATCH });
      return result.processed + result.retried + result.duplicates >= INBOX_BATCH;
    },
    services.logger,
  );
  const reconciler = startLoop(
    "reconciler",
    services.env.RECONCILE_INTERVAL_MS,
    async () => {
      await reconcileOnce(services, { worker, stopping: () => stopping });
    },
    services.logger,
  );
  const retention = startLoop(
    "retention",
    RETENTION_INTERVAL_MS,
    async () => (await purgeExpiredRows(services, { retentionDays: services.env.RETENTION_DAYS, customerDataDays: services.env.CUSTOMER_DATA_RETENTION_DAYS })).more,
    services.logger,
  );
  const readiness = startLoop(
    "readiness",
    READINESS_INTERVAL_MS,
    async () => {
      // Once stopping, nothing more is begun: above all no further token renewal, which spends a
      // shop's refresh token and must store the new pair before the process ends.
      await syncReadinessOfInstalledShops(services);
      if (stopping) return;
      await keepOfflineTokensAlive(services, { stopping: () => stopping });
      if (stopping) return;
      const digests = await recordDeviceKeyHashes(services.db, services.cipher);
      if (digests > 0) services.logger.info("Device key digests brought in line with the shops' credentials", { digests });
      if (stopping) return;
      await recheckUnconfirmedUninstalls(services, { stopping: () => stopping });
    },
    services.logger,
  );
  const unsubscribe = [services.subscribe("outbox", () => outbox.wake()), services.subscribe("inbox", () => inbox.wake()), services.subscribe("readiness", () => readiness.wake())];
  services.logger.info("Background workers started", { worker });
  return {
    async stop() {
      stopping = true;
      unsubscribe.forEach((off) => off());
      const allowanceMs = options.stopAllowanceMs ?? WORKERS_STOP_ALLOWANCE_MS;
      const stopped = await settledWithin(Promise.all([outbox.stop(), inbox.stop(), reconciler.stop(), retention.stop(), readiness.stop()]), allowanceMs);
      if (!stopped) services.logger.warn("Background workers still busy when their stop allowance ran out; what they hold is taken over once its claims lapse", { worker, allowanceMs });
      else services.logger.info("Background workers stopped", { worker });
      const renewing = (await services.shopify.renewalsUnderway?.(options.renewalsWaitMs ?? RENEWALS_STOP_WAIT_MS)) ?? 0;
      if (renewing > 0) services.logger.warn("Shopify token renewals still under way when stopping; their shops' merchants may have to open the app again", { worker, renewing });
    },
    async runOnce() {
      await inbox.pass();
      await reconciler.pass();
      await outbox.pass();
    },
  };
}
