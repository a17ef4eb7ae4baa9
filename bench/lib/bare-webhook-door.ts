// The floor for the app's webhook door: a bare node:http server that takes the same signed
// gateway webhook, checks its signature with the shop's Secret Key and commits one row with
// the body to the same kind of database before answering 200. No routing, no framework, no
// shop lookup, no workers. Measured under the same stream as the app, it says what a durable
// answer costs on this machine, so the app's answer times can be read against it.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { createClient } from "@libsql/client";
import pg from "pg";
import { verifyWebhookSignature } from "../../app/gateway/webhook-signature";
import { serveParent } from "./child-process";
import { listenOnLoopback } from "./loopback";

export interface BareWebhookDoorConfig {
  /** The benchmark's database: PostgreSQL gets a table of its own; SQLite a file of its own beside it. */
  databaseUrl: string;
  secretKeyHex: string;
}

interface Store {
  insert(id: string, body: string, at: Date): Promise<void>;
  close(): Promise<void>;
}

const TABLE = `CREATE TABLE IF NOT EXISTS "BareWebhook" ("id" TEXT PRIMARY KEY, "body" TEXT NOT NULL, "receivedAt" TIMESTAMP NOT NULL)`;

async function openStore(databaseUrl: string): Promise<Store> {
  if (databaseUrl.startsWith("postgres")) {
    // The app's pool size, with every commit waiting for the disk as the app's webhook insert does.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    pool.on("error", () => undefined);
    await pool.query(TABLE);
    return {
      insert: async (id, body, at) => void (await pool.query(`INSERT INTO "BareWebhook" ("id", "body", "receivedAt") VALUES ($1, $2, $3)`, [id, body, at.toISOString()])),
      close: () => pool.end(),
    };
  }
  // The same driver, journal and sync setting as the app's SQLite (write-ahead log, synchronous FULL).
  const client = createClient({ url: databaseUrl.replace(/\.db$/, ".bare-door.db") });
  await client.execute("PRAGMA busy_timeout = 5000");
  await client.execute("PRAGMA journal_mode = WAL");
  await client.execute(TABLE);
  return {
    insert: async (id, body, at) => void (await client.execute({ sql: `INSERT INTO "BareWebhook" ("id", "body", "receivedAt") VALUES (?, ?, ?)`, args: [id, body, at.toISOString()] })),
    close: async () => client.close(),
  };
}

serveParent<BareWebhookDoorConfig, { url: string }>(async ({ databaseUrl, secretKeyHex }) => {
  const store = await openStore(databaseUrl);
  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const rawBody = Buffer.concat(chunks);
      const now = new Date();
      const header = (name: string) => (typeof req.headers[name] === "string" ? (req.headers[name] as string) : null);
      const verified = verifyWebhookSignature({ secretHex: secretKeyHex, nonce: header("x-nonce"), signature: header("x-signature"), rawBody, now });
      if (!verified.ok) {
        res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: verified.reason }));
        return;
      }
      await store.insert(randomUUID(), rawBody.toString("utf8"), now);
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    } catch (error) {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: String(error) }));
    }
  });
  const { url, close } = await listenOnLoopback(server);
  return {
    info: { url },
    handlers: {},
    stop: async () => {
      await close();
      await store.close();
    },
  };
});
