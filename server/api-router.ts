// Serves the machine-facing API (app/api/api-routes.server.ts) on Node's own request and
// response: no web Request or Response is built, and Remix never sees these paths. Any
// other method than POST is answered 405; a handler that throws is logged and answered 500
// (Shopify and the gateway retry), without the request's body or headers in the log (but
// Shopify's request id).
import express, { type Response } from "express";
import { API_ROUTES, type ApiRoute } from "../app/api/api-routes.server";
import { encodeAnswer, methodNotAllowed, type ApiAnswer, type ApiRequest } from "../app/api/http.server";
import type { AppServices } from "../app/services.server";

/** What of a request id header is logged: an id's characters only, never anything else a caller sends. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function send(res: Response, answer: ApiAnswer): void {
  const { status, headers, text } = encodeAnswer(answer);
  res.writeHead(status, headers);
  res.end(text ?? undefined);
}

export function apiRouter(services: AppServices): express.Router {
  /** Never rejects: whatever fails, in the handler or in writing its answer, is logged and answered (or the connection closed). */
  async function answer(route: ApiRoute, request: ApiRequest, res: Response): Promise<void> {
    try {
      send(res, await route.handle(services, request));
    } catch (error) {
      // Shopify's id of the request, which its support and the merchant's Partner dashboard quote.
      const requestId = REQUEST_ID.exec(request.header("shopify-request-id") ?? "")?.[0];
      services.logger.error("API request failed", { route: route.path, ...(requestId ? { requestId } : {}), error });
      if (res.headersSent) res.destroy();
      else send(res, { status: 500, body: { error: "internal_error", message: "The request could not be completed; retry shortly." } });
    }
  }

  const router = express.Router();
  for (const route of API_ROUTES) {
    router.all(route.path, (req, res) => {
      if (req.method !== "POST") return send(res, methodNotAllowed("POST"));
      const request: ApiRequest = {
        header(name) {
          const value = req.headers[name.toLowerCase()];
          return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
        },
        params: Object.fromEntries(Object.entries(req.params).map(([name, value]) => [name, Array.isArray(value) ? value.join("/") : value])),
        body: req,
      };
      void answer(route, request, res);
    });
  }
  return router;
}
