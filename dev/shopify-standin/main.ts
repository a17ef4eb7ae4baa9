// Runs the Shopify stand-in on its own: `tsx dev/shopify-standin/main.ts --app-url http://localhost:3000`.
// Options come from the command line only, so a dev runner passes them explicitly.

import { parseArgs } from "node:util";
import { startShopifyStandin } from "./server";

const { values } = parseArgs({
  options: {
    "app-url": { type: "string" },
    port: { type: "string", default: "4020" },
    host: { type: "string", default: "127.0.0.1" },
    shop: { type: "string" },
    "access-token": { type: "string" },
    "payment-session-path": { type: "string" },
    "refund-session-path": { type: "string" },
    "capture-session-path": { type: "string" },
    "void-session-path": { type: "string" },
    help: { type: "boolean", default: false },
  },
});

if (values.help || !values["app-url"]) {
  console.log(`Usage: tsx dev/shopify-standin/main.ts --app-url <app origin> [--port 4020] [--host 127.0.0.1]
       [--shop demo-shop.myshopify.com] [--access-token <token>] [--payment-session-path /payments/session]
       [--refund-session-path /payments/refund] [--capture-session-path /payments/capture] [--void-session-path /payments/void]`);
  process.exit(values.help ? 0 : 2);
}

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got ${values.port}`);
  process.exit(2);
}

const standin = await startShopifyStandin({
  appUrl: values["app-url"],
  port,
  host: values.host,
  ...(values.shop ? { shopDomain: values.shop } : {}),
  ...(values["access-token"] ? { accessToken: values["access-token"] } : {}),
  ...(values["payment-session-path"] ? { paymentSessionPath: values["payment-session-path"] } : {}),
  ...(values["refund-session-path"] ? { refundSessionPath: values["refund-session-path"] } : {}),
  ...(values["capture-session-path"] ? { captureSessionPath: values["capture-session-path"] } : {}),
  ...(values["void-session-path"] ? { voidSessionPath: values["void-session-path"] } : {}),
});

console.log(`Shopify stand-in for ${standin.shopDomain}
  checkout simulator:  ${standin.origin}/checkout
  Payments Apps API:   ${standin.graphqlEndpoint()}
  inspection:          ${standin.origin}/_standin/sessions
  access token:        ${values["access-token"] ? "(as given)" : "(generated; pass --access-token to fix it)"}`);

let closing = false;
const shutdown = (signal: string) => {
  if (closing) return;
  closing = true;
  console.log(`Shopify stand-in: ${signal}, closing`);
  void standin.close().then(() => process.exit(0));
};
process.on("SIGINT", () => shutdown("SIGINT"));
process.on("SIGTERM", () => shutdown("SIGTERM"));
