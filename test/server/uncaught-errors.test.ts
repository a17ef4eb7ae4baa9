// The server's last handler (server/request-errors.ts): an error no route answered is
// answered in plain words with its own 4xx, or a 500, never with the error's text or stack, and
// logged once by the app's logger, a notification URL's path without its token.
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { createLogger } from "../../app/lib/logger.server";
import { answerUncaughtErrors } from "../../server/request-errors";

const lines: string[] = [];
let server: Server;
let origin = "";

beforeAll(async () => {
  const app = express();
  app.get("/too-large", () => {
    throw Object.assign(new Error("request entity too large: 123456 bytes"), { status: 413 });
  });
  app.post("/gateway/webhooks/:token/broken", () => {
    throw new Error("a handler failed while reading the database at /var/lib/app.db");
  });
  app.get("/cut-short", (_req, res, next) => {
    res.status(200).type("text/plain").write("the answer began");
    next(new Error("failed while writing"));
  });
  app.get("/odd-status", () => {
    throw Object.assign(new Error("odd"), { statusCode: 302 });
  });
  app.use(answerUncaughtErrors(createLogger({ level: "debug", sink: (line) => lines.push(line) })));
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function answerOf(path: string, method = "GET") {
  const before = lines.length;
  const answer = await fetch(`${origin}${path}`, { method });
  return { status: answer.status, type: answer.headers.get("content-type"), body: await answer.text(), logged: lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>) };
}

it("a 4xx the error carries is the answer, logged as information", async () => {
  const printed = vi.spyOn(console, "error");
  const { status, type, body, logged } = await answerOf("/too-large");
  expect(status).toBe(413);
  expect(type).toBe("text/plain; charset=utf-8");
  expect(body).toBe("Payload Too Large: this request cannot be answered.\n");
  expect(logged).toEqual([expect.objectContaining({ level: "info", msg: "Request refused", method: "GET", path: "/too-large", status: 413 })]);
  expect(printed).not.toHaveBeenCalled();
});

it("any other error is a 500 with nothing of why, logged as an error with the path's token masked", async () => {
  const { status, body, logged } = await answerOf("/gateway/webhooks/tok3n-that-authenticates/broken", "POST");
  expect(status).toBe(500);
  expect(body).toBe("Internal Server Error: something went wrong on our side. Please try again in a moment.\n");
  expect(body).not.toContain("database");
  expect(logged).toEqual([expect.objectContaining({ level: "error", msg: "Request failed", method: "POST", path: "/gateway/webhooks/[token]", status: 500 })]);
  expect(JSON.stringify(logged)).not.toContain("tok3n-that-authenticates");
});

it("a status outside 400-599 that an error carries is not taken: 500", async () => {
  const { status, logged } = await answerOf("/odd-status");
  expect(status).toBe(500);
  expect(logged).toEqual([expect.objectContaining({ level: "error", status: 500 })]);
});

it("an error after the answer began cuts the answer short, and is logged by the app's logger only", async () => {
  const printed = vi.spyOn(console, "error");
  const before = lines.length;
  const read = await fetch(`${origin}/cut-short`).then((answer) => answer.text()).then(
    () => "whole",
    () => "cut short",
  );
  expect(read).toBe("cut short");
  expect(lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([expect.objectContaining({ level: "error", msg: "Request failed after its answer began", path: "/cut-short" })]);
  expect(printed).not.toHaveBeenCalled();
});
