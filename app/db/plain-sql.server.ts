// Plain SQL for the statements on the hot paths (every payment session, every gateway
// webhook): the same `Prisma.sql` templates either way, run straight on the pg pool the
// Prisma client shares on PostgreSQL, or on SQLite straight on the driver adapter the Prisma
// client uses, behind the same lock (its one connection is shared by every query of the
// process). Either way the statement skips the client's query compiler: on PostgreSQL that
// halves a statement's round trip (see BENCHMARKS.md); on SQLite, where the statements run on
// the event loop's thread, it is that thread's time.
import { AsyncLocalStorage } from "node:async_hooks";
import { ColumnTypeEnum, type ArgType, type ColumnType, type SqlDriverAdapter, type SqlQueryable } from "@prisma/driver-adapter-utils";
import pg from "pg";
import { Prisma } from "../../generated/prisma/sqlite/client";
import type { DatabaseKind } from "./database-url";
import type { Database } from "./database.server";
import { groupWriter } from "./group-commit";

export interface PlainSql {
  /** Which SQL the statements must speak. */
  readonly kind: DatabaseKind;
  /**
   * Runs a statement; the number of rows it wrote. On SQLite it may be committed together with
   * other callers' writes that came while another was being written (group-commit.ts), unless
   * `alone`: then it is committed by itself, never held in another write's transaction.
   */
  execute(statement: Prisma.Sql, options?: { alone?: boolean }): Promise<number>;
  /** Runs a query; its rows, typed as the Prisma client types raw rows (dates as Date, int8 as bigint). */
  query<Row>(statement: Prisma.Sql): Promise<Row[]>;
  /** Runs the statements in one transaction; the rows each wrote. */
  executeInTransaction(statements: Prisma.Sql[]): Promise<number[]>;
  /** Runs `work` in one transaction on one connection (committed when it returns, rolled back when it throws). */
  inTransaction<T>(work: (tx: PlainStatements) => Promise<T>): Promise<T>;
}

/** The statements of one transaction. */
export type PlainStatements = Pick<PlainSql, "kind" | "execute" | "query">;

/**
 * A time where PostgreSQL cannot infer a parameter's type (a select list, a function's
 * argument), so it would take it as text: cast there; SQLite takes it as it is.
 */
export function timeValue(kind: DatabaseKind, at: Date): Prisma.Sql {
  return kind === "postgresql" ? Prisma.sql`CAST(${at} AS TIMESTAMP(3))` : Prisma.sql`${at}`;
}

/** A table or column name, quoted for either dialect: names come from the code's typed keys, never from input. */
export const quotedName = (name: string): Prisma.Sql => Prisma.raw(`"${name}"`);

/**
 * `"a" = $1, "b" = $2` for an UPDATE's SET, from typed keys; a value may also be an SQL
 * expression (`Prisma.sql`) of the row's own columns. Undefined values are left out.
 */
export function assignments(values: Record<string, unknown>): Prisma.Sql {
  return Prisma.join(
    Object.entries(values)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => Prisma.sql`${quotedName(name)} = ${value}`),
  );
}

/**
 * `INSERT INTO "table" (columns) SELECT values WHERE onlyIf`: rows (one, or several with the
 * same columns) written only while a condition on other rows holds, checked in the same
 * statement (the caller may add ON CONFLICT). A select list's parameters have no type on
 * PostgreSQL (it would take them as text), so there the rows come as one JSON value typed
 * column by column by the table's own row type (times as UTC text, as the client writes
 * them); SQLite takes the values as they are.
 */
export function insertWhere(
  kind: DatabaseKind,
  table: string,
  rows: Record<string, unknown> | Record<string, unknown>[],
  onlyIf: Prisma.Sql = Prisma.sql`TRUE`,
): Prisma.Sql {
  const list = Array.isArray(rows) ? rows : [rows];
  if (list.length === 0) throw new Error(`no ${table} rows to insert`);
  const names = Prisma.join(Object.keys(list[0]!).map(quotedName));
  let source: Prisma.Sql;
  if (kind === "postgresql") {
    const json = Array.isArray(rows) ? Prisma.sql`jsonb_populate_recordset` : Prisma.sql`jsonb_populate_record`;
    source = Prisma.sql`SELECT ${names} FROM ${json}(NULL::${quotedName(table)}, CAST(${JSON.stringify(rows, bigintAsText)} AS JSONB))`;
  } else if (list.length === 1) {
    source = Prisma.sql`SELECT ${Prisma.join(Object.values(list[0]!))}`;
  } else {
    source = Prisma.sql`SELECT * FROM (VALUES ${Prisma.join(list.map((row) => Prisma.sql`(${Prisma.join(Object.values(row))})`))})`;
  }
  // The WHERE (TRUE when no condition is given) also keeps SQLite from reading a following ON
  // CONFLICT as part of the SELECT.
  return Prisma.sql`INSERT INTO ${quotedName(table)} (${names}) ${source} WHERE ${onlyIf}`;
}

/** JSON has no 64-bit integers: a bigint goes as its digits, which the column's type reads back exactly. */
function bigintAsText(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** Through the Prisma client: SQLite, or a client the caller wrapped (the benchmark's timing). */
export function plainSqlThroughClient(db: Database, kind: DatabaseKind): PlainSql {
  const statements = (client: Pick<Database, "$executeRaw" | "$queryRaw">): PlainStatements => ({
    kind,
    execute: (statement) => client.$executeRaw(statement),
    query: <Row>(statement: Prisma.Sql) => client.$queryRaw<Row[]>(statement),
  });
  return {
    ...statements(db),
    executeInTransaction: (list) => db.$transaction(list.map((statement) => db.$executeRaw(statement))),
    inTransaction: (work) => db.$transaction((tx) => work(statements(tx))),
  };
}

/**
 * The plain transaction the current work runs in, while it is open. Inside it, a statement
 * must go through the transaction's own statements: on SQLite one issued outside them (or a
 * second transaction) would wait for ever for the lock its own transaction holds, and on
 * PostgreSQL it would run on another connection, outside the transaction. Such a statement
 * fails at once instead. Work the transaction started that runs after it closed (a timer, a
 * wake-up) is not held to it.
 */
const openTransaction = new AsyncLocalStorage<{ open: boolean }>();

export class NestedPlainSqlError extends Error {
  override name = "NestedPlainSqlError";
}

function outsideTransactions<T>(run: () => Promise<T>): Promise<T> {
  if (openTransaction.getStore()?.open) {
    return Promise.reject(new NestedPlainSqlError("a plain SQL statement or transaction was started inside an open plain transaction: use the transaction's own statements"));
  }
  return run();
}

/** The statements outside any transaction, and the transactions `inTransaction` opens (a list of statements is one of them). */
function withTransactions(statements: PlainStatements, inTransaction: PlainSql["inTransaction"]): PlainSql {
  const transaction: PlainSql["inTransaction"] = (work) =>
    outsideTransactions(() =>
      inTransaction(async (tx) => {
        const marker = { open: true };
        try {
          return await openTransaction.run(marker, () => work(tx));
        } finally {
          marker.open = false;
        }
      }),
    );
  return {
    kind: statements.kind,
    execute: (statement, options) => outsideTransactions(() => statements.execute(statement, options)),
    query: <Row>(statement: Prisma.Sql) => outsideTransactions(() => statements.query<Row>(statement)),
    inTransaction: transaction,
    executeInTransaction: (list) =>
      transaction(async (tx) => {
        const counts: number[] = [];
        for (const statement of list) counts.push(await tx.execute(statement));
        return counts;
      }),
  };
}

/** A value the adapter hands back, as the Prisma client's raw queries turn it (dates as Date, 64-bit integers as bigint). */
function clientValue(value: unknown, type: ColumnType | undefined): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case ColumnTypeEnum.Int32:
      return Math.trunc(Number(value));
    case ColumnTypeEnum.Int64:
      return BigInt(typeof value === "number" ? Math.trunc(value) : (value as string | bigint));
    case ColumnTypeEnum.Boolean:
      return value === true || value === 1 || value === "true" || value === "1";
    case ColumnTypeEnum.DateTime:
    case ColumnTypeEnum.Date:
      return new Date(value as string | number);
    case ColumnTypeEnum.Numeric:
      return new Prisma.Decimal(value as string | number);
    case ColumnTypeEnum.Json:
      return typeof value === "string" ? JSON.parse(value) : value;
    case ColumnTypeEnum.Bytes:
      return Array.isArray(value) ? new Uint8Array(value as number[]) : value;
    default:
      return value;
  }
}

/**
 * A statement as the driver adapter takes it: `?` placeholders, and the values with the type
 * the adapter needs to convert them (dates are written as the client writes them, ISO text).
 */
function adapterQuery(statement: Prisma.Sql) {
  const argTypes: ArgType[] = statement.values.map((value) => ({
    scalarType: typeof value === "bigint" ? "bigint" : value instanceof Date ? "datetime" : "unknown",
    arity: "scalar",
  }));
  return { sql: statement.sql, args: statement.values, argTypes };
}

/**
 * Straight on the driver adapter the Prisma client uses (SQLite): `connect` gives the client's
 * own adapter, so a statement here waits for the same lock as the client's queries and
 * transactions. Values and rows are converted as the client's raw queries convert them.
 */
export function plainSqlOnAdapter(connect: () => Promise<SqlDriverAdapter>, kind: DatabaseKind): PlainSql {
  const statements = (target: () => Promise<SqlQueryable>): PlainStatements => ({
    kind,
    async execute(statement) {
      return (await target()).executeRaw(adapterQuery(statement));
    },
    async query<Row>(statement: Prisma.Sql) {
      const result = await (await target()).queryRaw(adapterQuery(statement));
      return result.rows.map((row) => {
        const record: Record<string, unknown> = {};
        result.columnNames.forEach((name, i) => (record[name] = clientValue(row[i], result.columnTypes[i])));
        return record as Row;
      });
    },
  });
  // Writes started while another is being written share its successor's commit
  // (group-commit.ts): one sync of SQLite's log on the app's thread for a burst of webhooks,
  // settlements or deliveries, each write under its own savepoint.
  const writer = groupWriter<PlainStatements>(async () => {
    const tx = await (await connect()).startTransaction();
    return {
      statementsFor: (isOpen) =>
        statements(async () => {
          if (!isOpen()) throw new Error("a statement of a plain transaction that has ended");
          return tx;
        }),
      savepoint: async (command, name) => void (await tx.executeRaw({ sql: `${command} ${name}`, args: [], argTypes: [] })),
      commit: () => tx.commit(),
      rollback: () => tx.rollback(),
    };
  });
  const outside = statements(connect);
  const execute: PlainStatements["execute"] = (statement, options) =>
    options?.alone
      ? outside.execute(statement)
      : writer.write(
          (tx) => tx.execute(statement),
          () => outside.execute(statement),
        );
  return withTransactions({ ...outside, execute }, (work) => writer.transaction(work));
}

// PostgreSQL type ids whose text the pool must read as the Prisma client does (NUMERIC as a Decimal).
const TIMESTAMP = 1114;
const INT8 = 20;
const NUMERIC = 1700;

/**
 * TIMESTAMP(3) columns hold UTC without a zone (as Prisma writes them): read them as UTC
 * whatever the process's time zone, and send dates the same way.
 */
const readUtcTimestamp = (text: string) => new Date(`${text.replace(" ", "T")}Z`);
const writeUtcTimestamp = (date: Date) => date.toISOString().replace("T", " ").replace("Z", "");

const readBigInt = (text: string) => BigInt(text);
const readDecimal = (text: string) => new Prisma.Decimal(text);

/** The pool's own parsers but for those three, per query (the pg module's global parsers stay as they are). */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") => {
    if (oid === TIMESTAMP) return readUtcTimestamp;
    if (oid === INT8) return readBigInt;
    if (oid === NUMERIC) return readDecimal;
    return pg.types.getTypeParser(oid, format);
  }) as pg.CustomTypesConfig["getTypeParser"],
};

function parameters(statement: Prisma.Sql): unknown[] {
  return statement.values.map((value) => (value instanceof Date ? writeUtcTimestamp(value) : value));
}

/** Straight on the pool (PostgreSQL): the statement's `$n` text and its values. */
export function plainSqlOnPool(pool: pg.Pool): PlainSql {
  const config = (statement: Prisma.Sql): pg.QueryConfig => ({ text: statement.text, values: parameters(statement), types });
  const statements = (client: pg.Pool | pg.PoolClient): PlainStatements => ({
    kind: "postgresql",
    async execute(statement) {
      return (await client.query(config(statement))).rowCount ?? 0;
    },
    async query<Row>(statement: Prisma.Sql) {
      return (await client.query(config(statement))).rows as Row[];
    },
  });
  async function inTransaction<T>(work: (tx: PlainStatements) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let result: T;
    try {
      await client.query("BEGIN");
      result = await work(statements(client));
      await client.query("COMMIT");
    } catch (error) {
      // A connection that cannot roll back is closed, not given back to the pool.
      const broken = await client.query("ROLLBACK").then(() => false, () => true);
      client.release(broken);
      throw error;
    }
    client.release();
    return result;
  }
  return withTransactions(statements(pool), inTransaction);
}
