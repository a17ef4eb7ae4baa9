// A fresh PostgreSQL database for one test file, on the server at 127.0.0.1:5432
// (PG_TEST_URL to use another), dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";

const ADMIN_URL = process.env.PG_TEST_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface TestPostgresDatabase {
  url: string;
  /** A client of the database of the test's own (a transaction it holds open, say), ended when the database is dropped. */
  connect(): Promise<pg.Client>;
  drop(): Promise<void>;
}

export async function createTestPostgresDatabase(): Promise<TestPostgresDatabase> {
  const name = `cryptopay_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const clients: pg.Client[] = [];
  return {
    url: url.toString(),
    async connect() {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      clients.push(client);
      return client;
    },
    async drop() {
      await Promise.all(clients.splice(0).map((client) => client.end().catch(() => undefined)));
      const client = new pg.Client({ connectionString: ADMIN_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
