// What no route gets to answer: a path that is not valid percent-encoding, and an error that
// no handler caught. Both are answered here, in a few plain words, and logged by the app's
// logger, which keeps a notification URL's token out of the log (loggedPath). Left to Express,
// a route's parameter that cannot be decoded throws, and Express's own last handler answers
// with the error's stack in any environment but production, and writes the stack, the raw
// path with it (a shop's notification token and all), to the console in any but test.
import { STATUS_CODES } from "node:http";
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../app/lib/logger.server";
import { loggedPath } from "../app/lib/page-requests.server";
import { routedPath } from "../app/lib/routed-path";

function answerPlainly(res: Parameters<RequestHandler>[1], status: number, words: string): void {
  res.status(status).type("text/plain; charset=utf-8").set({ "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" });
  res.send(`${STATUS_CODES[status] ?? "Error"}: ${words}\n`);
}

/** Refuses, before any router, a path that cannot be decoded: it names nothing here. Its text is not logged. */
export function refuseUndecodablePaths(logger: Logger): RequestHandler {
  return (req, res, next) => {
    if (routedPath(req.originalUrl) !== null) return next();
    logger.info("Request refused", { method: req.method, status: 400, reason: "the path is not valid percent-encoding" });
    answerPlainly(res, 400, "the address is not valid percent-encoding.");
  };
}

/** The last handler: an error no route answered. The client's (a 4xx the error carries) is information; any other is the app's failure. */
export function answerUncaughtErrors(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const where = { method: req.method, path: loggedPath(req.path) };
    if (res.headersSent) {
      // Too late to answer: the client sees the answer cut short, as Express would do (without its console line).
      logger.error("Request failed after its answer began", { ...where, error });
      res.destroy();
      return;
    }
    const carrier = error as { status?: unknown; statusCode?: unknown } | null;
    const carried = carrier?.status ?? carrier?.statusCode;
    const status = typeof carried === "number" && carried >= 400 && carried < 600 ? carried : 500;
    if (status < 500) logger.info("Request refused", { ...where, status });
    else logger.error("Request failed", { ...where, status, error });
    answerPlainly(res, status, status < 500 ? "this request cannot be answered." : "something went wrong on our side. Please try again in a moment.");
  };
}
