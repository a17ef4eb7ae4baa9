// An error a page's loader or action throws is logged through the app's logger (which scrubs
// secrets, and whose lines every stack checks for them), not printed by Remix's console.error.
import { afterEach, expect, it, vi } from "vitest";
import { stackForFile } from "../support/stack";

const lines: string[] = [];
const stack = stackForFile({ workers: false, logLines: lines, env: { DEV_ADMIN_LOGIN: "true" } });

afterEach(() => vi.restoreAllMocks());

it("a request a page cannot take is answered and logged by the app's logger, with its method and path, and nothing on the console", async () => {
  const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
  // The payments list has no action: Remix answers 405 and reports it as an error.
  const answer = await fetch(`${stack().app.url}/app/payments?shop=${stack().shopDomain}`, { method: "POST", body: new URLSearchParams({ anything: "1" }) });
  expect(answer.status).toBe(405);
  const logged = lines.filter((line) => line.includes("Page request failed")).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(logged).toEqual([expect.objectContaining({ level: "error", method: "POST", path: "/app/payments" })]);
  expect(printed).not.toHaveBeenCalled();
});
