import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import tsconfigPaths from "vite-tsconfig-paths";

// Tests run in Node against real parts: SQLite/PostgreSQL, the gateway sandbox
// over HTTP, and Chromium for pages. Each file isolates its own servers and data.
export default defineConfig({
  plugins: [tsconfigPaths()],
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one file at a time per core but one, so a single one on a 2-core
    // machine; most of a file's time is spent waiting on its servers, databases and Chromium,
    // and two at a time there took the whole suite from 20 to 12 minutes.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ["default"],
  },
});
