// Group commit: writes (a statement, or a transaction's work) that callers start while an
// earlier one is being written wait, and are then written together in one transaction, so one
// commit stands for many. On SQLite a commit syncs the log to disk on the app's own thread
// (synchronous FULL, so that a webhook answered 200 survives a power cut), and a burst of
// webhooks spent as much of that thread's time in those syncs as in anything else the app did
// for them (BENCHMARKS.md).
//
// Nothing changes for a caller:
// - A write started while nothing is being written runs at once, alone, as it would without this.
// - Each write of a batch runs under its own savepoint, one after the other in the order they
//   came, so a later one sees what an earlier one wrote, as if each had committed first. One
//   that fails (or throws) is rolled back to its savepoint alone and its caller gets its error
//   at once; the others are not touched.
// - A caller's promise settles only once its write is committed. When the commit fails, every
//   write it held fails with it, as each one's own commit would have.
// - When a write's failure ends the whole transaction (it cannot be undone alone), that write
//   fails; the writes the batch held before it were rolled back with it, through no fault of
//   their own, and are written again, each alone. Those it had not come to go in the next batch.
// - Each write runs in its caller's async context (AsyncLocalStorage), not the batch's.
import { AsyncResource } from "node:async_hooks";

/** A batch is at most this many writes, so one batch holds the connection for a bounded time. */
export const GROUP_COMMIT_MAX_BATCH = 32;

/** An open transaction, as the group writer drives it. */
export interface GroupTransaction<Tx> {
  /**
   * The statements of the transaction for one write, refused once `isOpen` says the write has
   * ended: a statement it left running must not land in the next write's part of the batch.
   */
  statementsFor(isOpen: () => boolean): Tx;
  /** Runs one of SAVEPOINT, ROLLBACK TO and RELEASE with a savepoint's name. */
  savepoint(command: "SAVEPOINT" | "ROLLBACK TO" | "RELEASE", name: string): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

interface Job<Tx> {
  work: (tx: Tx) => Promise<unknown>;
  /** The write on its own (a statement's autocommit), when it has a cheaper way than a transaction. */
  alone?: () => Promise<unknown>;
  inCallersContext: <R>(run: () => R) => R;
  /** Set once a batch that held it broke through another write's fault: it is written again, alone. */
  again?: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface GroupWriter<Tx> {
  /** Runs `work` in a transaction (perhaps shared with other callers' writes, each under its own savepoint); its result once committed. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** The same for a write that also has a way of its own, used when it is alone (a statement, committed by itself). */
  write<T>(work: (tx: Tx) => Promise<T>, alone: () => Promise<T>): Promise<T>;
}

/** A group writer over `begin`, which opens a transaction (on the one connection the writes share). */
export function groupWriter<Tx>(begin: () => Promise<GroupTransaction<Tx>>, maxBatch: number = GROUP_COMMIT_MAX_BATCH): GroupWriter<Tx> {
  let waiting: Job<Tx>[] = [];
  let writing = false;

  /** A job's work, in its caller's context, with statements that are refused once it has ended. */
  async function runWork(job: Job<Tx>, transaction: GroupTransaction<Tx>): Promise<unknown> {
    let open = true;
    try {
      return await job.inCallersContext(() => job.work(transaction.statementsFor(() => open)));
    } finally {
      open = false;
    }
  }

  async function runAlone(job: Job<Tx>): Promise<void> {
    try {
      if (job.alone) {
        job.resolve(await job.inCallersContext(job.alone));
        return;
      }
      const transaction = await begin();
      let result: unknown;
      try {
        result = await runWork(job, transaction);
      } catch (error) {
        await transaction.rollback();
        throw error;
      }
      await transaction.commit();
      job.resolve(result);
    } catch (error) {
      job.reject(error);
    }
  }

  /**
   * Writes a batch of two or more; the jobs it did not get to (its transaction broke), to be
   * written in the next batch.
   */
  async function runBatch(batch: Job<Tx>[]): Promise<Job<Tx>[]> {
    let transaction: GroupTransaction<Tx>;
    try {
      transaction = await begin();
    } catch (error) {
      for (const job of batch) job.reject(error);
      return [];
    }
    const done: { job: Job<Tx>; result: unknown }[] = [];
    for (const [index, job] of batch.entries()) {
      const name = `group_write_${index}`;
      let result: unknown;
      try {
        await transaction.savepoint("SAVEPOINT", name);
      } catch {
        // Not this write's fault: it goes again, alone, with those before it.
        return broken(transaction, [...written(done), job], batch.slice(index + 1));
      }
      try {
        result = await runWork(job, transaction);
      } catch (error) {
        // Only this write is undone. When even that fails, the transaction is no longer one
        // (the database may have rolled it all back), and nothing more is written in it.
        try {
          await transaction.savepoint("ROLLBACK TO", name);
          await transaction.savepoint("RELEASE", name);
        } catch {
          job.reject(error);
          return broken(transaction, written(done), batch.slice(index + 1));
        }
        job.reject(error);
        continue;
      }
      try {
        await transaction.savepoint("RELEASE", name);
      } catch {
        return broken(transaction, [...written(done), job], batch.slice(index + 1));
      }
      done.push({ job, result });
    }
    try {
      await transaction.commit();
    } catch (error) {
      for (const { job } of done) job.reject(error);
      return [];
    }
    for (const { job, result } of done) job.resolve(result);
    return [];
  }

  /**
   * A batch whose transaction broke: it is rolled back, the writes it undid through no fault of
   * their own are to be written again, each alone (never in a batch again, so none goes round for
   * ever), and those it did not get to wait for the next batch. Each broken batch settles or
   * sends to be written alone at least one write, so the writer always gets through its queue.
   */
  async function broken(transaction: GroupTransaction<Tx>, again: Job<Tx>[], notRun: Job<Tx>[]): Promise<Job<Tx>[]> {
    await transaction.rollback().catch(() => undefined);
    for (const job of again) job.again = true;
    return [...again, ...notRun];
  }

  const written = (done: { job: Job<Tx> }[]): Job<Tx>[] => done.map(({ job }) => job);

  async function writeAll(): Promise<void> {
    writing = true;
    try {
      while (waiting.length > 0) {
        // A write put back from a broken batch goes alone.
        const batch = waiting.slice(0, waiting[0]!.again ? 1 : maxBatch);
        waiting = waiting.slice(batch.length);
        if (batch.length === 1) await runAlone(batch[0]!);
        else waiting = [...(await runBatch(batch)), ...waiting];
      }
    } finally {
      writing = false;
    }
  }

  function enqueue<T>(work: (tx: Tx) => Promise<T>, alone?: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // The caller's async context (its AsyncLocalStorage stores), kept for when its write runs.
      const callers = new AsyncResource("GroupWrite");
      const inCallersContext = <R>(run: () => R): R => callers.runInAsyncScope(run);
      waiting.push({ work, alone, inCallersContext, resolve: resolve as (value: unknown) => void, reject });
      if (!writing) void writeAll();
    });
  }

  return {
    transaction: (work) => enqueue(work),
    write: (work, alone) => enqueue(work, alone),
  };
}
