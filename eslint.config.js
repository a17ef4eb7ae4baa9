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
      // The pages run on their own copy of the app's modules (Vite's in development, the Remix
      // build in production) while the services they are handed were built by the server's:
      // an error thrown by a service is not an instance of the page's copy of its class.
      "no-restricted-syntax": [
        "error",
        {
          selector: "BinaryExpression[operator='instanceof'][right.name='CredentialDecryptionError']",
          message: "Use isCredentialDecryptionError: the pages and the services may hold different copies of the class.",
        },
      ],
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
