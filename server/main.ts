// The app's process: validates the configuration, applies pending migrations, serves
// HTTP(S) and runs the background workers; SIGTERM/SIGINT shut it down gracefully.
import { ConfigurationError, env as loadEnv } from "../app/config/env.server";
import { applyMigrations } from "../app/db/migrate.server";
import { createLogger } from "../app/lib/logger.server";
import { portRefusal, startAppServer } from "./app";
import { MtlsConfigurationError, tlsOptionsFor } from "./mtls";

let env;
try {
  env = loadEnv();
} catch (error) {
  if (error instanceof ConfigurationError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}

// From here on the process writes the app's JSON log lines, as its services do.
const log = createLogger({ level: env.LOG_LEVEL });

// Stopped while starting (the migrations may wait minutes for another instance's migrator):
// nothing is served yet, so the process ends at once, as a kill would end it, the database
// rolling back a migration under way. Without a handler the signal would be ignored in a
// container, where the process is PID 1, until the container's kill.
const SIGNAL_EXIT_CODES = { SIGTERM: 143, SIGINT: 130 } as const;
const stopWhileStarting = (signal: keyof typeof SIGNAL_EXIT_CODES) => {
  log.warn(`${signal} received while starting: exiting`, { signal });
  process.exit(SIGNAL_EXIT_CODES[signal]);
};
for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, stopWhileStarting);
// The certificate files are read before anything starts: a path that cannot be read stops the
// start here, with a line that names the setting, not after the migrations have run.
let tls;
try {
  tls = tlsOptionsFor(env);
} catch (error) {
  if (!(error instanceof MtlsConfigurationError)) throw error;
  log.error(error.message);
  process.exit(1);
}
await applyMigrations(env.DATABASE_URL);
const server = await startAppServer({ env, mode: env.NODE_ENV === "production" ? "build" : "vite", workers: env.WORKERS, tls }).catch((error: unknown) => {
  const code = portRefusal(error);
  if (!code) throw error;
  log.error(`Cannot listen on ${env.HOST}:${env.PORT} (${code}): another process has that port, or it needs privileges. Stop it, or set PORT to another port.`);
  process.exit(1);
});
log.info(`App listening on ${server.url}`, { url: server.url });

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.off(signal, stopWhileStarting);
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal} received: finishing in-flight work`, { signal });
    // The shutdown grace, then 25 s for the drain.
    const limitMs = env.SHUTDOWN_GRACE_MS + 25_000;
    const force = setTimeout(() => {
      log.error(`Shutdown did not finish in ${limitMs / 1000} s: exiting`);
      process.exit(1);
    }, limitMs);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error("Shutdown failed", { error: error instanceof Error ? error.message : String(error) });
        process.exit(1);
      },
    );
  });
}
