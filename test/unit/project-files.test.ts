// The files Shopify and the tooling read agree with the code.
import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { FIAT_CODES } from "../../app/gateway/fiat-codes";
import { loaderFlags } from "../../server/workers-thread";

describe("project files", () => {
  it("the payments extension offers the method exactly in the gateway's fiat currencies", () => {
    const toml = readFileSync("extensions/crypto-payments/shopify.extension.toml", "utf8");
    const contexts = [...toml.matchAll(/\{ currency = "([A-Z]{3})" \}/g)].map((m) => m[1]);
    expect([...contexts].sort()).toEqual([...FIAT_CODES].sort());
    expect(toml).toMatch(/test_mode_available = true/);
    expect(toml).toMatch(/target = "payments\.offsite\.render"/);
  });

  it("the payments extension's labels fit Shopify's 50 characters (a longer merchant_label is refused on deploy)", () => {
    const toml = readFileSync("extensions/crypto-payments/shopify.extension.toml", "utf8");
    const labels = [...toml.matchAll(/^\s*(?:merchant_label|buyer_label)\s*=\s*"([^"]*)"|\blabel\s*=\s*"([^"]*)"/gm)].map((m) => m[1] ?? m[2]!);
    expect(labels).toContain("Pay with crypto");
    expect(labels.length).toBeGreaterThanOrEqual(7);
    for (const label of labels) expect([...label].length, label).toBeLessThanOrEqual(50);
  });

  it("every webhook subscription names a route file that exists", () => {
    const toml = readFileSync("shopify.app.toml", "utf8");
    const files = [...toml.matchAll(/# (app\/routes\/[^\s]+\.tsx)/g)].map((m) => m[1]!);
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) expect(() => readFileSync(file)).not.toThrow();
  });

  it("every package the production server and the sandbox load is a runtime dependency, so they start after `npm ci --omit=dev`", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string>; dependencies: Record<string, string> };
    // Loaded only by the development server (server/app.ts), never in production.
    const developmentOnly = new Set(["vite"]);
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? files(join(dir, entry.name)) : /\.(ts|tsx|mjs)$/.test(entry.name) ? [join(dir, entry.name)] : [],
      );
    // The sandbox too: the image runs it for Shopify's test orders.
    const sources = ["app", "server", "sandbox"].flatMap((dir) => files(dir));
    const packages = new Set<string>();
    for (const file of sources) {
      const text = readFileSync(file, "utf8");
      // Value imports only: `import type` and `export type` are erased.
      for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\s)(?:[^"';]*?\sfrom\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) {
        const specifier = match[1] ?? match[2]!;
        if (specifier.startsWith(".") || specifier.startsWith("~/") || specifier.startsWith("node:") || builtinModules.includes(specifier)) continue;
        const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;
        if (!developmentOnly.has(name)) packages.add(name);
      }
    }
    expect(packages.size).toBeGreaterThan(10);
    expect([...packages].filter((name) => !(name in pkg.dependencies)).sort()).toEqual([]);
    // The start command, the image's and the worker thread load TypeScript through tsx.
    expect(pkg.scripts.start).toContain("--import tsx");
    expect(loaderFlags([])).toEqual(["--import", "tsx"]);
    expect(pkg.dependencies).toHaveProperty("tsx");
  });

  it("the PostgreSQL schema is generated from the SQLite one", () => {
    expect(() => execFileSync(process.execPath, ["scripts/sync-prisma-schemas.mjs", "--check"], { stdio: "pipe" })).not.toThrow();
  });
});
