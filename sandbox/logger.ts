// The logger shape the sandbox accepts (info/warn/error with fields); silent by default.
export interface SandboxLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: SandboxLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
