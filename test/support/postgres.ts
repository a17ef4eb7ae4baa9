// A fresh PostgreSQL database for one test file, on the server at 127.0.0.1:5432
// (PG_TEST_URL to use another), dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";

const ADMIN_URL = process.env.PG_TEST_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export async function createTestPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
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
  return {
    url: url.toString(),
    async drop() {
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
