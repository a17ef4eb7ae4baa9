// The files Shopify and the tooling read agree with the code.
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { FIAT_CODES } from "../../app/gateway/fiat-codes";

describe("project files", () => {
  it("the payments extension offers the method exactly in the gateway's fiat currencies", () => {
    const toml = readFileSync("extensions/crypto-payments/shopify.extension.toml", "utf8");
    const contexts = [...toml.matchAll(/\{ currency = "([A-Z]{3})" \}/g)].map((m) => m[1]);
    expect([...contexts].sort()).toEqual([...FIAT_CODES].sort());
    expect(toml).toMatch(/test_mode_available = true/);
    expect(toml).toMatch(/target = "payments\.offsite\.render"/);
  });

  it("every webhook subscription names a route file that exists", () => {
    const toml = readFileSync("shopify.app.toml", "utf8");
    const files = [...toml.matchAll(/# (app\/routes\/[^\s]+\.tsx)/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) expect(() => readFileSync(file)).not.toThrow();
  });

  it("the PostgreSQL schema is generated from the SQLite one", () => {
    expect(() => execFileSync(process.execPath, ["scripts/sync-prisma-schemas.mjs", "--check"], { stdio: "pipe" })).not.toThrow();
  });
});
