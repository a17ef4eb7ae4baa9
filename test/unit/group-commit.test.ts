// Group commit (app/db/group-commit.ts) against a model database: rows staged in a transaction
// are committed all at once or not at all, savepoints undo what was staged after them, and each
// step takes a turn of the event loop, as the real driver's do.
import { AsyncLocalStorage } from "node:async_hooks";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { groupWriter, type GroupTransaction } from "../../app/db/group-commit";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

interface ModelTx {
  insert(row: number): Promise<number>;
  rows(): number[];
}

interface Faults {
  commit?: boolean;
  rollbackTo?: boolean;
}

function modelDatabase(faults: Faults = {}) {
  const committed: number[] = [];
  /** The rows of each transaction, committed or not, in the order they were staged. */
  const transactions: number[][] = [];
  const alone: number[] = [];
  let open = false;
  const begin = async (): Promise<GroupTransaction<ModelTx>> => {
    await turn();
    if (open) throw new Error("a second transaction on the one connection");
    open = true;
    let staged: number[] = [];
    const marks = new Map<string, number>();
    transactions.push(staged);
    const end = () => void (open = false);
    return {
      statementsFor: (isOpen) => ({
        async insert(row) {
          if (!isOpen()) throw new Error("a statement of a write that has ended");
          await turn();
          if (row < 0) throw new Error(`row ${row} refused`);
          staged.push(row);
          return 1;
        },
        rows: () => [...committed, ...staged],
      }),
      async savepoint(command, name) {
        await turn();
        if (command === "SAVEPOINT") marks.set(name, staged.length);
        else if (command === "ROLLBACK TO") {
          if (faults.rollbackTo) throw new Error("no such savepoint: the transaction was rolled back");
          staged.splice(marks.get(name)!);
        } else marks.delete(name);
      },
      async commit() {
        await turn();
        end();
        if (faults.commit) throw new Error("disk I/O error");
        committed.push(...staged);
        staged = [];
      },
      async rollback() {
        await turn();
        end();
        staged.splice(0);
      },
    };
  };
  const writeAlone = async (row: number) => {
    await turn();
    if (open) throw new Error("a statement on its own while a transaction is open");
    alone.push(row);
    if (row < 0) throw new Error(`row ${row} refused`);
    committed.push(row);
    return 1;
  };
  return { committed, transactions, alone, begin, writeAlone };
}

describe("group commit", () => {
  it("writes a write started while nothing is being written at once and alone, its own way when it has one", async () => {
    const db = modelDatabase();
    const writer = groupWriter(db.begin);
    await expect(writer.write((tx) => tx.insert(1), () => db.writeAlone(1))).resolves.toBe(1);
    await expect(writer.transaction(async (tx) => (await tx.insert(2)) + (await tx.insert(3)))).resolves.toBe(2);
    expect(db.alone).toEqual([1]);
    expect(db.transactions).toEqual([[2, 3]]);
    expect(db.committed).toEqual([1, 2, 3]);
  });

  it("writes those that came while one was being written in one transaction, in the order they came, each seeing the ones before and settling once committed", async () => {
    const db = modelDatabase();
    const writer = groupWriter(db.begin);
    const seen: Record<number, number[]> = {};
    const committedAtSettling: Record<number, number> = {};
    const writes = [1, 2, 3, 4].map((row) =>
      writer
        .transaction(async (tx) => {
          seen[row] = tx.rows();
          return tx.insert(row);
        })
        .then(() => (committedAtSettling[row] = db.committed.length)),
    );
    await Promise.all(writes);
    expect(db.transactions).toEqual([[1], [2, 3, 4]]);
    expect(seen).toEqual({ 1: [], 2: [1], 3: [1, 2], 4: [1, 2, 3] });
    expect(committedAtSettling).toEqual({ 1: 1, 2: 4, 3: 4, 4: 4 });
  });

  it("undoes a write of a batch that fails, alone, and fails its caller at once; the others are committed", async () => {
    const db = modelDatabase();
    const writer = groupWriter(db.begin);
    let failedBeforeCommit: boolean | null = null;
    const outcomes = Promise.allSettled([
      writer.transaction((tx) => tx.insert(1)),
      writer.transaction((tx) => tx.insert(2)),
      writer
        .transaction(async (tx) => {
          await tx.insert(3);
          return tx.insert(-3);
        })
        .catch((error: unknown) => {
          failedBeforeCommit = !db.committed.includes(2);
          throw error;
        }),
      writer.transaction(async () => {
        throw new Error("the work itself threw");
      }),
      writer.transaction((tx) => tx.insert(4)),
    ]);
    expect((await outcomes).map((o) => (o.status === "fulfilled" ? o.value : (o.reason as Error).message))).toEqual([1, 1, "row -3 refused", "the work itself threw", 1]);
    expect(failedBeforeCommit).toBe(true);
    expect(db.committed).toEqual([1, 2, 4]);
  });

  it("refuses a statement a write left running once it has ended, so it never lands in another write's part of the batch", async () => {
    const db = modelDatabase();
    const writer = groupWriter(db.begin);
    let late: Promise<string> | null = null;
    const outcomes = await Promise.allSettled([
      writer.transaction((tx) => tx.insert(1)),
      writer.transaction(async (tx) => {
        late = (async () => {
          for (let i = 0; i < 3; i++) await turn();
          return tx.insert(99).then(
            () => "written",
            (error: Error) => error.message,
          );
        })();
        throw new Error("gave up early");
      }),
      writer.transaction(async (tx) => {
        for (let i = 0; i < 6; i++) await turn();
        return tx.insert(3);
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await late).toBe("a statement of a write that has ended");
    expect(db.committed).toEqual([1, 3]);
  });

  it("fails every write a batch held when its commit fails, and writes the next ones as usual", async () => {
    const faults: Faults = {};
    const db = modelDatabase(faults);
    const writer = groupWriter(db.begin);
    const first = writer.transaction((tx) => tx.insert(1));
    faults.commit = true;
    const batch = Promise.allSettled([2, 3].map((row) => writer.transaction((tx) => tx.insert(row))));
    await first.catch(() => undefined);
    expect((await batch).map((o) => o.status)).toEqual(["rejected", "rejected"]);
    faults.commit = false;
    await expect(writer.transaction((tx) => tx.insert(5))).resolves.toBe(1);
    expect(db.committed).toEqual([5]);
  });

  it("when a failed write cannot be undone alone, fails that write only: the ones the batch held before it are written again alone, the rest in a new transaction", async () => {
    const faults: Faults = { rollbackTo: true };
    const db = modelDatabase(faults);
    const writer = groupWriter(db.begin);
    const first = writer.transaction((tx) => tx.insert(1));
    const outcomes = Promise.allSettled([writer.transaction((tx) => tx.insert(2)), writer.transaction((tx) => tx.insert(-3)), writer.transaction((tx) => tx.insert(4)), writer.transaction((tx) => tx.insert(5))]);
    await first;
    expect((await outcomes).map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect((await outcomes)[1]).toMatchObject({ reason: new Error("row -3 refused") });
    expect(db.committed).toEqual([1, 2, 4, 5]);
    // The broken batch, then 2 again on its own, then the two it had not come to.
    expect(db.transactions.slice(1)).toEqual([[], [2], [4, 5]]);
  });

  it("runs each write in its caller's async context", async () => {
    const db = modelDatabase();
    const writer = groupWriter(db.begin);
    const caller = new AsyncLocalStorage<string>();
    const seen = await Promise.all(["a", "b", "c"].map((name) => caller.run(name, () => writer.transaction(async (tx) => (await tx.insert(1), caller.getStore())))));
    expect(seen).toEqual(["a", "b", "c"]);
    expect(db.transactions.length).toBe(2);
  });

  it("writes at most the batch's bound of writes in one transaction", async () => {
    const db = modelDatabase();
    const writer = groupWriter(db.begin, 3);
    await Promise.all(Array.from({ length: 8 }, (_, i) => writer.transaction((tx) => tx.insert(i + 1))));
    expect(db.transactions).toEqual([[1], [2, 3, 4], [5, 6, 7], [8]]);
    expect(db.committed).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("commits every write that does not fail exactly once and fails only the callers of those that do, however they arrive, even when a failure breaks its batch", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ fails: fc.boolean(), statement: fc.boolean(), delayTurns: fc.nat({ max: 3 }) }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 8 }),
        // Whether a failed write's undo fails too, breaking its batch's transaction.
        fc.boolean(),
        async (arrivals, maxBatch, undoBreaks) => {
          const db = modelDatabase({ rollbackTo: undoBreaks });
          const writer = groupWriter(db.begin, maxBatch);
          const outcomes = await Promise.all(
            arrivals.map(async ({ fails, statement, delayTurns }, index) => {
              for (let i = 0; i < delayTurns; i++) await turn();
              const row = fails ? -(index + 1) : index + 1;
              const written = statement
                ? writer.write(
                    (tx) => tx.insert(row),
                    () => db.writeAlone(row),
                  )
                : writer.transaction(async (tx) => {
                    // Two rows, so a failing write leaves a row of its own staged to be undone.
                    await tx.insert(index + 1000);
                    return tx.insert(row);
                  });
              return written.then(
                () => "committed",
                () => "failed",
              );
            }),
          );
          expect(outcomes).toEqual(arrivals.map((a) => (a.fails ? "failed" : "committed")));
          const expected = arrivals.flatMap((a, index) => (a.fails ? [] : a.statement ? [index + 1] : [index + 1000, index + 1]));
          expect([...db.committed].sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
          expect(db.transactions.every((t) => t.length <= 2 * maxBatch)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });
});
