// Entry of the background workers' own thread (see workers-thread.ts): its own services
// and database connections, the same configuration (the thread's copy of process.env), and
// the loops of app/workers.server.ts, woken and stopped by messages from the request thread.
import { parentPort } from "node:worker_threads";
import { env } from "../app/config/env.server";
import { createLogger } from "../app/lib/logger.server";
import { createServices } from "../app/services.server";
import { startWorkers } from "../app/workers.server";
import type { ToWorkerThread, FromWorkerThread } from "./workers-thread";

if (!parentPort) throw new Error("server/worker-thread.ts runs as a worker thread only");
const port = parentPort;
const reply = (message: FromWorkerThread) => port.postMessage(message);
const config = env();
// Log lines (already scrubbed here) go to the request thread's logger, the process's one output.
const logger = createLogger({ level: config.LOG_LEVEL, sink: (line) => reply({ type: "log", line }) });
const services = createServices(config, { logger });
const workers = startWorkers(services);

port.on("message", (message: ToWorkerThread) => {
  if (message.type === "wake") {
    services.notify?.[message.loop]();
  } else if (message.type === "run-once") {
    workers.runOnce().then(
      () => reply({ type: "ran-once", id: message.id, ok: true }),
      (error: unknown) => reply({ type: "ran-once", id: message.id, ok: false, error: String(error) }),
    );
  } else if (message.type === "stop") {
    // The pass in flight finishes; then the thread ends by itself (nothing keeps it alive).
    void workers
      .stop()
      .then(() => services.db.$disconnect())
      .finally(() => port.close());
  }
});
