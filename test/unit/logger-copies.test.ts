// The production server loads the logger module itself and again inside the Remix build: two
// copies of it in one process. A secret registered through either copy is scrubbed from the
// lines written through the other.
import { expect, it, vi } from "vitest";

it("scrubs from one copy of the logger a secret registered through another", async () => {
  const first = await import("../../app/lib/logger.server");
  vi.resetModules();
  const second = await import("../../app/lib/logger.server");
  expect(second).not.toBe(first);

  const lines: string[] = [];
  const secret = "shpat_copied_module_secret_0001";
  const slotted = "shpat_copied_module_slotted_0001";
  first.registerSecret(secret);
  second.registerSecret(slotted, "offline-token:copies.myshopify.com");
  for (const copy of [first, second]) {
    copy.createLogger({ level: "debug", sink: (line) => lines.push(line) }).error(`failed with ${secret} and ${slotted}`, { detail: `${secret}/${slotted}` });
  }
  expect(lines).toHaveLength(2);
  for (const line of lines) {
    expect(line).not.toContain(secret);
    expect(line).not.toContain(slotted);
    expect(line).toContain("[redacted]");
  }
});
