// The production commands README.md documents run in the production image: key rotation
// (`npm run credentials:rotate`, against the production database with the production keys) and
// the migrations alone (`npm run setup`). The Dockerfile's final stage copies their scripts and
// every module of the project they import.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/**
 * What the Dockerfile's last stage holds, as paths of the project: the sources it copies from the
 * build context, and where it puts what it copies from the build stage (`generated`, the build).
 */
function finalStageCopies(): string[] {
  const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
  const stages = dockerfile.split(/^FROM /m);
  const last = stages[stages.length - 1]!;
  return last
    .split("\n")
    .filter((line) => /^COPY\s/.test(line))
    .flatMap((line) => {
      const parts = line.trim().split(/\s+/).slice(1);
      return parts[0]!.startsWith("--from=") ? parts.slice(-1) : parts.slice(0, -1);
    })
    .map((source) => source.replace(/^\.\//, "").replace(/\/$/, ""));
}

/** The file an npm script runs with tsx. */
function scriptFile(name: string): string {
  const scripts = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  const file = /tsx\s+(\S+\.ts)/.exec(scripts[name] ?? "")?.[1];
  if (!file) throw new Error(`npm script ${name} runs no .ts file`);
  return file;
}

/** The project's files `file` imports by a relative path, and theirs in turn. */
function projectImports(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = readFileSync(join(root, file), "utf8");
  const relative = [...text.matchAll(/^import [^;]*? from "(\.{1,2}\/[^"]+)";/gm)].map((m) => join(dirname(file), m[1]!));
  const resolved = relative.map((path) => (path.endsWith(".ts") || path.endsWith(".mjs") ? path : `${path}.ts`)).filter((path) => existsSync(join(root, path)));
  return [...resolved, ...resolved.flatMap((path) => projectImports(path, seen))];
}

const copied = (file: string, copies: string[]) => copies.some((source) => source === "." || file === source || file.startsWith(`${source}/`));

it.each(["credentials:rotate", "setup"])("README's production command `npm run %s` can run in the production image: its script and what it imports are copied into it", (name) => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  expect(readme).toContain(`npm run ${name}`);
  const file = scriptFile(name);
  const copies = finalStageCopies();
  expect({ script: file, inImage: copied(file, copies), finalStageCopies: copies }).toMatchObject({ script: file, inImage: true });
  const imports = projectImports(file);
  expect(imports.length).toBeGreaterThan(0);
  expect(imports.filter((path) => !copied(path, copies))).toEqual([]);
});
