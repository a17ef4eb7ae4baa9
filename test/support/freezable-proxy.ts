// A TCP proxy to a server whose open connections can be made to fall silent, as a connection
// to a database whose host froze, or across a network path that started dropping packets, does.
import net from "node:net";
import { afterAll, beforeAll } from "vitest";
import { applyMigrations } from "../../app/db/migrate.server";
import { createTestPostgresDatabase, type TestPostgresDatabase } from "./postgres";

export interface FreezableProxy {
  port: number;
  /** From now on, the connections open now pass nothing either way, and stay open. */
  freeze(): void;
  /** How many connections are open through it. */
  openConnections(): number;
  close(): Promise<void>;
}

/** A TCP proxy to the server whose open connections can be made to fall silent; connections opened later pass. */
export async function freezableProxy(host: string, port: number): Promise<FreezableProxy> {
  const open = new Set<{ frozen: boolean; sockets: net.Socket[] }>();
  const server = net.createServer((client) => {
    const link = { frozen: false, sockets: [client] };
    const upstream = net.connect(port, host);
    link.sockets.push(upstream);
    open.add(link);
    client.on("data", (chunk) => void (link.frozen || upstream.write(chunk)));
    upstream.on("data", (chunk) => void (link.frozen || client.write(chunk)));
    const end = () => {
      open.delete(link);
      for (const socket of link.sockets) socket.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    freeze: () => {
      for (const link of open) link.frozen = true;
    },
    openConnections: () => open.size,
    close: async () => {
      for (const link of open) for (const socket of link.sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

export interface DatabaseBehindProxy {
  database: TestPostgresDatabase;
  proxy: FreezableProxy;
  /** The database's URL through the proxy. */
  proxiedUrl: string;
}

/** For one test file: a fresh PostgreSQL database (migrated when asked) and a freezable proxy to it, both gone after the file. */
export function databaseBehindFreezableProxy(options: { migrated: boolean }): () => DatabaseBehindProxy {
  let fixture: DatabaseBehindProxy | undefined;
  beforeAll(async () => {
    const database = await createTestPostgresDatabase();
    if (options.migrated) await applyMigrations(database.url);
    const target = new URL(database.url);
    const proxy = await freezableProxy(target.hostname, Number(target.port || 5432));
    target.host = `127.0.0.1:${proxy.port}`;
    fixture = { database, proxy, proxiedUrl: target.toString() };
  }, 60_000);
  afterAll(async () => {
    await fixture?.proxy.close();
    await fixture?.database.drop();
  });
  return () => {
    if (!fixture) throw new Error("the database behind the proxy is made before the file's tests");
    return fixture;
  };
}
