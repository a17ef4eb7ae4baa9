import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort, onFreePort } from "../support/free-port";

const taken: Server[] = [];
afterEach(async () => {
  await Promise.all(taken.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}

describe("onFreePort", () => {
  it("starts again on another port when its port was taken before it listened", async () => {
    const tried: number[] = [];
    const server = await onFreePort(async (port) => {
      tried.push(port);
      // The first draw is taken by someone else in the moment before this start listens on it.
      if (tried.length === 1) taken.push(await listen(port));
      return listen(port);
    });
    taken.push(server);
    expect(tried).toHaveLength(2);
    expect(tried[1]).not.toBe(tried[0]);
    expect((server.address() as { port: number }).port).toBe(tried[1]);
  });

  it("gives up after the attempts it was given, with the last EADDRINUSE", async () => {
    const blocker = await listen(await freePort());
    taken.push(blocker);
    const blocked = (blocker.address() as { port: number }).port;
    let attempts = 0;
    const failure = await onFreePort(async () => {
      attempts++;
      return listen(blocked);
    }, 3).catch((error: unknown) => error);
    expect(attempts).toBe(3);
    expect((failure as NodeJS.ErrnoException).code).toBe("EADDRINUSE");
  });

  it("throws any other failure at once", async () => {
    let attempts = 0;
    await expect(
      onFreePort(async () => {
        attempts++;
        throw new Error("the database is down");
      }),
    ).rejects.toThrow("the database is down");
    expect(attempts).toBe(1);
  });
});
