// The production build's browser files, served over real HTTP from a folder laid out as
// build/client is: a file is served with its caching, and a path that names a folder (in any
// spelling) goes on to the pages, never redirected.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildClientFiles } from "../../server/static-files";

let directory: string;
let server: import("node:http").Server;
let origin: string;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "build-client-"));
  mkdirSync(join(directory, "assets", "nested"), { recursive: true });
  writeFileSync(join(directory, "assets", "entry-abc123.js"), "export {};\n");
  writeFileSync(join(directory, "favicon.ico"), "icon");
  const app = express();
  app.use(buildClientFiles(directory));
  app.use((_req, res) => void res.status(404).type("text/plain").send("the pages"));
  server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(directory, { recursive: true, force: true });
});

it("serves a fingerprinted asset cached for a year, and another file for an hour", async () => {
  const asset = await fetch(`${origin}/assets/entry-abc123.js`);
  expect(asset.status).toBe(200);
  expect(await asset.text()).toBe("export {};\n");
  expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  const icon = await fetch(`${origin}/favicon.ico`);
  expect(icon.status).toBe(200);
  expect(icon.headers.get("cache-control")).toBe("public, max-age=3600");
});

it.each(["/", "/assets", "/assets/", "/assets/nested", "/app/payments/..%2F..", "/app/payments/..%2F..%2Fassets", "/assets/nested/..%2F..%2F", "//assets"])(
  "a path that names a folder (%s) goes on to the pages, not redirected",
  async (path) => {
    const answer = await fetch(`${origin}${path}`, { redirect: "manual" });
    expect(answer.headers.get("location")).toBeNull();
    expect(answer.status).toBe(404);
    expect(await answer.text()).toBe("the pages");
  },
);
