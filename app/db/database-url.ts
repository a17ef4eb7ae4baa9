// What a DATABASE_URL names, and the database settings' defaults, without loading any
// database client: the configuration reads them as well as the code that opens the database.
export type DatabaseKind = "sqlite" | "postgresql";

export function databaseKind(url: string): DatabaseKind {
  return /^postgres(ql)?:\/\//.test(url) ? "postgresql" : "sqlite";
}

export function sqliteFilePath(url: string): string {
  return url.replace(/^file:/, "");
}

/** PostgreSQL: a statement's time limit when none is set (the server's own default is none). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

/** PostgreSQL: how long opening a connection may take (pg waits for ever by default); the app's pool and the migrator alike. */
export const CONNECT_TIMEOUT_MS = 5_000;
