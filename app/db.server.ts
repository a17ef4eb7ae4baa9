// The process's one database client (one per module graph), opened from DATABASE_URL.
import { env } from "./config/env.server";
import { openDatabase, type Database } from "./db/database.server";

const globalForDb = globalThis as unknown as { __appDatabase?: Database };

export function appDatabase(): Database {
  globalForDb.__appDatabase ??= openDatabase(env().DATABASE_URL);
  return globalForDb.__appDatabase;
}
