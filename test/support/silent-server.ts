// A TCP server that takes connections and never answers (an overloaded database, a network
// path that drops packets), for a whole test file: its port, read from inside the tests.
import net from "node:net";
import { forThisFile } from "./for-this-file";

export function silentServerForFile(): () => number {
  const started = forThisFile(
    "the silent server",
    async () => {
      const sockets = new Set<net.Socket>();
      const server = net.createServer((socket) => void sockets.add(socket));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return { server, sockets, port: (server.address() as net.AddressInfo).port };
    },
    async ({ server, sockets }) => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  );
  return () => started().port;
}
