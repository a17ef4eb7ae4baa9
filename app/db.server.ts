// The process's one database client (one per module graph), opened from DATABASE_URL.
import { env } from "./config/env.server";
import { openDatabase, type Database } from "./db/database.server";

const globalForDb = globalThis as unknown as { __appDatabase?: Database };

/**
 * The server entry hands its client over before the routes load, so the whole process
 * (services, workers and Shopify's session storage) shares one database client.
 */
export function shareAppDatabase(db: Database): void {
  globalForDb.__appDatabase = db;
}

export function appDatabase(): Database {
  globalForDb.__appDatabase ??= openDatabase(env().DATABASE_URL, { poolSize: env().DATABASE_POOL_SIZE });
  return globalForDb.__appDatabase;
}
