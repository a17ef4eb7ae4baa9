// A real HTTP server on 127.0.0.1 (random port) that each test scripts: every
// incoming request is recorded and answered by the next queued handler.

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Handler = (request: RecordedRequest, res: ServerResponse, req: IncomingMessage) => void;

export interface ScriptedServer {
  origin: string;
  requests: RecordedRequest[];
  /** Queues handlers for the next requests, in order. */
  script(...handlers: Handler[]): void;
  close(): Promise<void>;
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_request, res) => {
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };
}

/** Answers with the given text as the body, byte for byte. */
export function raw(status: number, text: string, headers: Record<string, string> = {}): Handler {
  return (_request, res) => {
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(text);
  };
}

/** Never answers: the client has to time out. */
export function hang(): Handler {
  return () => {};
}

/** Reads the request, then drops the connection without answering. */
export function reset(): Handler {
  return (_request, _res, req) => {
    req.socket.destroy();
  };
}

export async function startScriptedServer(): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const queue: Handler[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(recorded);
      const handler = queue.shift() ?? json(599, { detail: "unscripted request" });
      handler(recorded, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    script: (...handlers) => queue.push(...handlers),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** A port on 127.0.0.1 on which nothing listens (it was just released). */
export async function closedPortOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
