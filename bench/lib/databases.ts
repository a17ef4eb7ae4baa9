// A fresh, empty app database per benchmark run: an SQLite file in the run's temp
// folder, or a throwaway PostgreSQL database on 127.0.0.1:5432 (dropped afterwards).
import { join } from "node:path";
import { createTestPostgresDatabase } from "../../test/support/postgres";

export type DbKind = "sqlite" | "postgresql";

export interface FreshDatabase {
  kind: DbKind;
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(kind: DbKind, dir: string, name: string): Promise<FreshDatabase> {
  if (kind === "sqlite") return { kind, url: `file:${join(dir, `${name}.db`)}`, drop: async () => undefined };
  const pg = await createTestPostgresDatabase();
  return { kind, url: pg.url, drop: pg.drop };
}

/** Null when PostgreSQL answers; otherwise why it cannot be used. */
export async function postgresProblem(): Promise<string | null> {
  try {
    const probe = await Promise.race([
      createTestPostgresDatabase(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer within 5 s")), 5_000)),
    ]);
    await probe.drop();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
