// The production build's browser files (build/client), as production serves them: the
// fingerprinted assets cached for a year, the rest for an hour. Files only: a path that names
// a folder of the build (/app/payments/..%2F.. names build/client itself) goes on to the
// pages, which answer it, instead of being redirected to the folder's address with a slash.
import express from "express";
import { join } from "node:path";

export function buildClientFiles(directory: string): express.Router {
  const filesOnly = { index: false, redirect: false } as const;
  const router = express.Router();
  router.use("/assets", express.static(join(directory, "assets"), { ...filesOnly, immutable: true, maxAge: "1y" }));
  router.use(express.static(directory, { ...filesOnly, maxAge: "1h" }));
  return router;
}
