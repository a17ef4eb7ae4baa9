// The gateway notification URL's token (/gateway/webhooks/:token) selects the shop whose
// Secret Key verifies a notification: it is a credential and never reaches the log. A request
// under that URL that the API router does not take (a path segment appended, a doubled slash,
// another spelling) falls through to the pages, whose 404 is logged without it, and written to
// the console not at all.
import { afterEach, expect, it, vi } from "vitest";
import { watchConsole } from "../support/console";
import { stackForFile, webhookTokenOf } from "../support/stack";

const lines: string[] = [];
const stack = stackForFile({ workers: false, logLines: lines });

afterEach(() => vi.restoreAllMocks());

it.each([
  ["POST", "/notify", "/gateway/webhooks"],
  ["GET", "//", "/gateway/webhooks"],
  ["GET", "/x", "/GATEWAY/Webhooks"],
])("a %s to the notification URL with %s appended (under %s) is answered 404 and logs no webhook token", async (method, suffix, spelling) => {
  const token = await webhookTokenOf(stack());
  const printed = watchConsole();
  const before = lines.length;
  const answer = await fetch(`${stack().app.url}${spelling}/${token}${suffix}`, { method, ...(method === "POST" ? { body: "{}", headers: { "content-type": "application/json" } } : {}) });
  await answer.body?.cancel();
  expect(answer.status).toBe(404);
  const written = lines.slice(before);
  expect(written.filter((line) => line.includes(token))).toEqual([]);
  expect(printed().filter((text) => text.includes(token)), "nothing on the console names the token").toEqual([]);
  const refused = written.filter((line) => line.includes("Page request refused")).map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(refused, "the refusal is logged once").toEqual([expect.objectContaining({ level: "info", method, path: "/gateway/webhooks/[token]", status: 404 })]);
});
