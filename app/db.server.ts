// The process's one database client (one per module graph), opened from DATABASE_URL.
import { env } from "./config/env.server";
import { openConfiguredDatabase, type Database } from "./db/database.server";

const globalForDb = globalThis as unknown as { __appDatabase?: Database };

/**
 * The server entry hands its client over before the routes load, so the whole process
 * (services, workers and Shopify's session storage) shares one database client.
 */
export function shareAppDatabase(db: Database): void {
  globalForDb.__appDatabase = db;
}

export function appDatabase(): Database {
  globalForDb.__appDatabase ??= openConfiguredDatabase(env()).db;
  return globalForDb.__appDatabase;
}
