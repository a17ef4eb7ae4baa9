// The benchmark's own small servers (the bare proxy and door, the counting and dropping
// proxies, the shop router) listen on a free port of 127.0.0.1.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Starts `server` on a free loopback port: its URL, and a close that also ends kept-alive connections. */
export async function listenOnLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
