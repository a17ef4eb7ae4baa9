// A PostgreSQL connection that fell silent: pg failed a query whose answer did not come within
// its query_timeout (the database's host froze, a network path drops packets). The answer may
// still never come, and every later query on the connection would queue behind it, so the
// connection is closed rather than used again: by the app's pool and by the migrator alike.
import type pg from "pg";

/** The message of pg's error for a query not answered within its query_timeout. */
const QUERY_READ_TIMEOUT = "Query read timeout";

export function isQueryReadTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === QUERY_READ_TIMEOUT;
}

/**
 * Closes the connection's socket at once (pg's end() would wait for the server's answer to its
 * goodbye, which does not come). The client then reports the closing as its error.
 */
export function destroyConnection(client: pg.ClientBase): void {
  (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
}
