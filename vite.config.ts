import { vitePlugin as remix } from "@remix-run/dev";
import { defineConfig } from "vite";
import tsconfigPaths from "vite-tsconfig-paths";

declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}

export default defineConfig({
  server: { hmr: { port: 64999 }, fs: { allow: ["app", "node_modules", "generated"] } },
  plugins: [
    remix({
      ignoredRouteFiles: ["**/.*"],
      future: {
        v3_fetcherPersist: true,
        v3_relativeSplatPath: true,
        v3_throwAbortReason: true,
        v3_lazyRouteDiscovery: true,
        v3_singleFetch: true,
        v3_routeConfig: true,
      },
    }),
    tsconfigPaths(),
  ],
  build: { assetsInlineLimit: 0, target: "es2022" },
  // Pre-bundled up front, so the first admin page load does not re-bundle (and reload) React.
  optimizeDeps: {
    // The dependency scan's entries, named here: with the ones the Remix plugin sets the scan found
    // nothing, so the first page load discovered the rest, re-bundled and reloaded (a blank admin).
    entries: ["./app/root.tsx", "./app/routes/**/*.tsx"],
    include: ["@shopify/app-bridge-react", "@shopify/polaris", "@shopify/shopify-app-remix/react", "@remix-run/react", "react", "react-dom", "react-dom/client"],
  },
});
