// What the server entry passes to every loader and action.
import type { AppServices } from "./services.server";

declare module "@remix-run/node" {
  interface AppLoadContext {
    services: AppServices;
  }
}

export {};
