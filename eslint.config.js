import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";

export default tseslint.config(
  { ignores: ["build/**", "generated/**", "node_modules/**", "test-results/**", "public/build/**", ".cache/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-console": "error",
      // The environment is read in exactly one module (app/config/env.server.ts).
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration through app/config/env.server.ts." }],
    },
  },
  {
    files: ["app/config/env.server.ts", "sandbox/config.ts", "test/**", "scripts/**", "bench/**", "prisma.config.ts", "vitest.config.ts", "vite.config.ts", "server/**"],
    rules: { "no-restricted-properties": "off" },
  },
  {
    files: ["**/*.mjs", "**/*.cjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly" } },
  },
  {
    files: ["scripts/**", "bench/**", "sandbox/main.ts", "server/**", "dev/**"],
    rules: { "no-console": "off" },
  },
);
