// A TCP port on 127.0.0.1 for a server whose URL must be known before it listens (the app: its
// own URL is in its configuration, and the Shopify stand-in is told it first).
//
// The port is drawn below the kernel's ephemeral range, which is where every `listen(0)` and
// every outgoing connection takes its port: none of those can take it in the moment between the
// choice and the listen, nor while an app restarts on it. Only another draw can, which is why a
// caller that can choose again does so on EADDRINUSE (isAddressInUse).
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

const LOWEST = 10_000;

function ephemeralRangeStart(): number {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const port = Number(low);
    if (Number.isInteger(port) && port > LOWEST + 1_000) return port;
  } catch {
    // Not Linux, or no /proc: the IANA dynamic range's start.
  }
  return 49_152;
}

const HIGHEST = ephemeralRangeStart() - 1;

/**
 * Ports of the range that fetch refuses to connect to ("bad port", the Fetch standard's port
 * blocking list): a server there is unreachable from the tests' and the app's fetch.
 */
const FETCH_BLOCKED = new Set([10080]);

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" || error.code === "EACCES" ? resolve(false) : reject(error)));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    if (!FETCH_BLOCKED.has(port) && (await listensOn(port))) return port;
  }
  throw new Error(`no free port found between ${LOWEST} and ${HIGHEST}`);
}

export function isAddressInUse(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === "EADDRINUSE";
}

/**
 * Runs `start` on a free port, and again on another one (up to `attempts` in all) when the
 * port was taken before `start` listened on it. `start` closes what it opened before it throws.
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (!isAddressInUse(error) || attempt >= attempts) throw error;
    }
  }
}
