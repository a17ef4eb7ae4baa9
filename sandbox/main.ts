// Entry of `npm run sandbox`: starts the gateway sandbox with the environment's
// configuration and prints where to reach it and the demo credentials.
import { loadSandboxConfig } from "./config.js";
import { startSandbox } from "./server.js";

const config = loadSandboxConfig();
const logger = {
  info: () => undefined,
  warn: (msg: string, fields?: Record<string, unknown>) => console.warn(`[sandbox] ${msg}`, fields ?? ""),
  error: (msg: string, fields?: Record<string, unknown>) => console.error(`[sandbox] ${msg}`, fields ?? ""),
};

const sandbox = await startSandbox({
  port: config.port,
  host: config.host,
  dbPath: config.dbPath,
  publicUrl: config.publicUrl ?? (config.port === 0 ? undefined : `http://localhost:${config.port}`),
  tickMs: config.tickMs,
  logger,
}).catch((error: unknown) => {
  // The port is taken or not ours: say which and what moves it, instead of a stack trace.
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "EADDRINUSE" && code !== "EACCES") throw error;
  console.error(`The gateway sandbox cannot listen on port ${config.port} (${code}): another process has it (an npm run dev?). Stop it, or set SANDBOX_PORT to another port.`);
  process.exit(1);
});

const base = config.publicUrl ?? (config.port === 0 ? sandbox.origin : `http://localhost:${config.port}`);
console.log(`Gateway sandbox running (storage: ${config.dbPath})`);
console.log(`  Base URL:        ${base}/api/v1`);
console.log(`  Demo device key: ${sandbox.demo.deviceKey}   (X-Device-Id)`);
console.log(`  Demo Secret Key: ${sandbox.demo.secretKeyHex}`);
console.log(`  Dashboard:       ${base}/sandbox/dashboard`);

const stop = (): void => {
  sandbox.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
