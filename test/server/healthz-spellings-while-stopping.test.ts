// The load balancer's health check during the shutdown grace: /healthz answers 503 however
// the balancer spells its path (a trailing slash, another letter case), as Remix serves the
// health route under each of them.
import { expect, it } from "vitest";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { SHUTDOWN_GRACE_MS: "2000" } });

it("every spelling of /healthz that the router serves answers 503 once the instance is stopping", async () => {
  const app = stack().app;
  const spellings = ["/healthz", "/healthz/", "/HEALTHZ", "/Healthz?probe=lb", "/healthz%2F", "//healthz"];
  const before: Record<string, number> = {};
  for (const path of spellings) before[path] = (await fetch(`${app.url}${path}`)).status;
  // Those the router serves as the health route answer 200 while the instance runs.
  const served = spellings.filter((path) => before[path] === 200);
  expect(served).toEqual(expect.arrayContaining(["/healthz", "/healthz/", "/HEALTHZ", "/Healthz?probe=lb"]));

  const closing = app.close();
  const during: Record<string, number> = {};
  for (const path of served) during[path] = (await fetch(`${app.url}${path}`)).status;
  await closing;
  await stack().restartApp({ workers: false });
  expect(during).toEqual(Object.fromEntries(served.map((path) => [path, 503])));
});
