// A page's streamed body (the payments export, read from the database batch by batch) is read
// at the pace the client takes it, and no more once the client has gone. Real HTTP on
// 127.0.0.1, with Express and the compression middleware the app's pages go through: a client
// that stops reading holds the server to what the connection's buffers take, and one that
// hangs up ends the body's reads.
import { createHash, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import net from "node:net";
import http from "node:http";
import compression from "compression";
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import { sendResponse } from "../../server/remix-handler";

const CHUNK_BYTES = 256 * 1024;

/** A body of `chunks` chunks of random text (incompressible enough), counting its reads and whether it was cancelled. */
function countedBody(chunks: number) {
  const state = { pulled: 0, cancelled: false, hash: createHash("sha256") };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === chunks) return controller.close();
      state.pulled++;
      const chunk = new TextEncoder().encode(randomBytes(CHUNK_BYTES * 0.75).toString("base64"));
      state.hash.update(chunk);
      controller.enqueue(chunk);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(body: ReadableStream<Uint8Array>, withCompression: boolean): Promise<number> {
  const app = express();
  if (withCompression) app.use(compression());
  app.get("/export.csv", (_req, res, next) => {
    sendResponse(res, new Response(body, { headers: { "Content-Type": "text/csv; charset=utf-8" } })).catch(next);
  });
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** Waits until `read()` has not changed for `quietMs` (at most `limitMs`), and gives its value. */
async function settled(read: () => number, quietMs = 400, limitMs = 8000): Promise<number> {
  const start = Date.now();
  let value = read();
  let since = Date.now();
  while (Date.now() - start < limitMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = read();
    if (now !== value) {
      value = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) break;
  }
  return value;
}

describe.each([
  { name: "plain", withCompression: false },
  { name: "through compression", withCompression: true },
])("a streamed body, $name", ({ withCompression }) => {
  it("is read only as far as a client that stopped reading can take, and no more once it hangs up", async () => {
    // 250 MB on offer; a client that reads nothing can only hold the connection's buffers.
    const { stream, state } = countedBody(1000);
    const port = await serve(stream, withCompression);
    const socket = net.connect(port, "127.0.0.1");
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    socket.write(`GET /export.csv HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: ${withCompression ? "gzip" : "identity"}\r\n\r\n`);
    socket.pause();

    const pulledWhileStopped = await settled(() => state.pulled);
    // Loopback buffers take a few megabytes; the body is 250.
    expect(pulledWhileStopped * CHUNK_BYTES).toBeLessThan(40 * 1024 * 1024);
    expect(state.cancelled).toBe(false);

    socket.destroy();
    await settled(() => Number(state.cancelled));
    expect(state.cancelled).toBe(true);
    expect(state.pulled - pulledWhileStopped).toBeLessThanOrEqual(1);
  }, 30_000);

  it("reaches a client that reads it whole, every byte in order", async () => {
    const { stream, state } = countedBody(24);
    const port = await serve(stream, withCompression);
    const answer = await fetch(`http://127.0.0.1:${port}/export.csv`, { headers: { "Accept-Encoding": withCompression ? "gzip" : "identity" } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    if (withCompression) expect(answer.headers.get("content-encoding")).toBe("gzip");
    const received = createHash("sha256").update(new Uint8Array(await answer.arrayBuffer())).digest("hex");
    expect(received).toBe(state.hash.digest("hex"));
    expect(state.pulled).toBe(24);
  }, 30_000);
});
