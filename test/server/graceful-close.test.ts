// Shutdown with clients that keep their connections alive (a load balancer, a TLS proxy):
// once the server is closing, a kept-alive connection is closed as soon as it falls idle (and
// an answer given meanwhile says Connection: close), so close() ends instead of waiting for
// connections that never stay idle for long.
import http from "node:http";
import { expect, it } from "vitest";
import { KEEP_ALIVE_TIMEOUT_MS } from "../../server/app";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });

/** GET on a kept-alive connection; the answer's headers. */
function get(agent: http.Agent, url: string): Promise<http.IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (response) => {
        response.resume();
        response.on("end", () => resolve(response.headers));
      })
      .on("error", reject);
  });
}

it("close() ends while a client keeps sending on a kept-alive connection", async () => {
  const url = `${stack().app.url}/healthz`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const answers: (string | undefined)[] = [];
  let sending = true;
  const client = (async () => {
    while (sending) {
      try {
        answers.push((await get(agent, url)).connection);
      } catch {
        // The server has gone: the client stops.
        break;
      }
    }
  })();
  while (answers.length < 5) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(answers.every((connection) => connection === "keep-alive")).toBe(true);

  await stack().app.close();
  sending = false;
  await client;
  agent.destroy();
  // Started again, the app serves a payment as before.
  await stack().restartApp({ workers: false });
  const { delivery } = await stack().standin.state.startPayment({ test: true });
  expect(delivery.status, delivery.body).toBe(200);
}, 20_000);

it("keeps an idle connection longer than a load balancer keeps its own (60 s), and says so in Keep-Alive", async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const headers = await get(agent, `${stack().app.url}/healthz`);
  agent.destroy();
  expect(headers.connection).toBe("keep-alive");
  expect(headers["keep-alive"]).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
  expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
});
