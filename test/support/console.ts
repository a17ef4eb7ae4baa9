// What the code under test writes to the console, outside the app's logger.
import { vi } from "vitest";

/**
 * Watches console.error, console.warn and console.log from now until `vi.restoreAllMocks()`;
 * the function returned lists what they were given so far, a line per call.
 */
export function watchConsole(): () => string[] {
  const spies = [vi.spyOn(console, "error"), vi.spyOn(console, "warn"), vi.spyOn(console, "log")];
  return () => spies.flatMap((spy) => spy.mock.calls.map((call) => call.map(String).join(" ")));
}
