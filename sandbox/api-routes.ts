// The gateway API under /api/v1: the five endpoints of the specification with
// the real service's order of checks (route, X-Device-Id, throttles, method),
// plus the injected gateway faults. Paths are accepted with or without the
// trailing slash and handled the same.
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { CURRENCIES } from "./catalogue.js";
import type { SandboxContext } from "./context.js";
import { webUrlOf } from "./context.js";
import { validateCreateOrder } from "./create-order-input.js";
import { charField, drfErrors } from "./drf-fields.js";
import type { FaultEndpoint, GatewayFault } from "./gateway-faults.js";
import { HttpError, readFields, safeDecode, sendJson } from "./http-kit.js";
import type { PyJson } from "./python-json.js";
import { createdOrderView, paymentView } from "./payment-view.js";
import type { DeviceRecord } from "./store.js";

export const API_PREFIX = "/api/v1";

interface ApiRoute {
  endpoint: FaultEndpoint;
  method: "GET" | "POST";
  critical: boolean;
  handle(ctx: SandboxContext, req: IncomingMessage, device: DeviceRecord, url: URL, param: string): Promise<ApiResponse>;
}

interface ApiResponse {
  status: number;
  body: PyJson;
}

const NOT_FOUND_HTML =
  '<!doctype html>\n<html lang="en">\n<head>\n  <title>Not Found</title>\n</head>\n<body>\n  <h1>Not Found</h1><p>The requested resource was not found on this server.</p>\n</body>\n</html>\n';
const SERVER_ERROR_HTML =
  '<!doctype html>\n<html lang="en">\n<head>\n  <title>Server Error (500)</title>\n</head>\n<body>\n  <h1>Server Error (500)</h1><p></p>\n</body>\n</html>\n';

function sendDjangoHtml(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Content-Length": Buffer.byteLength(html) });
  res.end(html);
}

const ROUTES: Array<{ pattern: RegExp; routes: ApiRoute[] }> = [
  {
    pattern: /^\/currencies\/?$/,
    routes: [{ endpoint: "currencies", method: "GET", critical: false, handle: listCurrencies }],
  },
  {
    pattern: /^\/device\/?$/,
    routes: [{ endpoint: "device.create", method: "POST", critical: true, handle: createDevice }],
  },
  {
    pattern: /^\/orders\/?$/,
    routes: [
      { endpoint: "orders.list", method: "GET", critical: false, handle: listOrders },
      { endpoint: "orders.create", method: "POST", critical: true, handle: createOrder },
    ],
  },
  {
    pattern: /^\/orders\/info\/([^/]+)\/?$/,
    routes: [{ endpoint: "orders.info", method: "GET", critical: false, handle: orderInfo }],
  },
];

export async function handleApi(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const path = url.pathname.slice(API_PREFIX.length);
  let match: { routes: ApiRoute[]; param: string } | null = null;
  for (const r of ROUTES) {
    const m = r.pattern.exec(path);
    if (m) {
      match = { routes: r.routes, param: safeDecode(m[1] ?? "") };
      break;
    }
  }
  if (!match) return sendDjangoHtml(res, 404, NOT_FOUND_HTML);

  const auth = await ctx.accounts.authenticate(req.headers["x-device-id"] as string | undefined);
  if (!auth.ok) return sendJson(res, 403, { detail: auth.detail });

  const method = req.method === "HEAD" ? "GET" : (req.method ?? "GET");
  const route = match.routes.find((r) => r.method === method);

  // As DRF's APIView: the throttles run in initial(), before the method's handler is looked up,
  // so OPTIONS and a wrong method are throttled too and count (in the general scopes only: they
  // are not one of the critical calls).
  const decision = ctx.throttle.check(auth.device.apiKey, route?.critical ?? false);
  if (!decision.allowed) return sendThrottled(res, decision.retryAfterSeconds);

  const allow = match.routes.map((r) => r.method).join(", ");
  if (req.method === "OPTIONS") return sendJson(res, 200, { name: "Gateway API", renders: ["application/json"] }, { Allow: `${allow}, OPTIONS` });
  if (!route) return sendJson(res, 405, { detail: `Method "${req.method}" not allowed.` }, { Allow: `${allow}, OPTIONS` });

  const fault = ctx.faults.take(route.endpoint);
  if (fault && !fault.afterCreate) return answerWithFault(res, fault);
  const answer = await route.handle(ctx, req, auth.device, url, match.param);
  // With after_create the work is done and then the answer is lost: the caller cannot know the outcome.
  if (fault) return answerWithFault(res, fault);
  sendJson(res, answer.status, answer.body);
}

/** DRF's Throttled answer: "second" for a wait of exactly 1, "seconds" otherwise, and Retry-After. */
function sendThrottled(res: ServerResponse, waitSeconds: number): void {
  const unit = waitSeconds === 1 ? "second" : "seconds";
  sendJson(res, 429, { detail: `Request was throttled. Expected available in ${waitSeconds} ${unit}.` }, { "Retry-After": String(waitSeconds) });
}

function answerWithFault(res: ServerResponse, fault: GatewayFault): void {
  switch (fault.kind) {
    case "http_500":
      return sendDjangoHtml(res, 500, SERVER_ERROR_HTML);
    case "http_429":
      return sendThrottled(res, 1);
    case "http_404":
      // Django REST Framework's own refusal, in words that name no cause.
      return sendJson(res, 404, { detail: "Not found." });
    case "proxy_400":
      // A proxy in front of the gateway refusing the request (a header too large, say): not the gateway's answer.
      res.writeHead(400, { "Content-Type": "text/html" });
      res.end("<html><head><title>400 Bad Request</title></head><body><center><h1>400 Bad Request</h1></center></body></html>");
      return;
    case "timeout":
      // No answer at all: the connection stays open until the caller gives up or the sandbox stops.
      res.socket?.setTimeout(0);
      return;
    case "reset": {
      const socket = res.socket;
      if (socket && "resetAndDestroy" in socket && typeof socket.resetAndDestroy === "function") socket.resetAndDestroy();
      else socket?.destroy();
      return;
    }
  }
}

async function listCurrencies(ctx: SandboxContext): Promise<ApiResponse> {
  const base = ctx.publicBase();
  return {
    status: 200,
    body: CURRENCIES.map((c) => ({
      symbol: c.symbol,
      name: c.name,
      min_amount: c.minAmountEur,
      max_amount: c.maxAmountEur,
      image: `${base}/media/currencies/${c.symbol}.svg`,
      blockchain: c.blockchain,
    })),
  };
}

const deviceSchema = z.object({ name: charField({ required: true, maxLength: 128 }) });

async function createDevice(ctx: SandboxContext, req: IncomingMessage, device: DeviceRecord): Promise<ApiResponse> {
  const parsed = deviceSchema.safeParse(await readFields(req));
  if (!parsed.success) return { status: 400, body: drfErrors(parsed.error) };
  const name = parsed.data.name as string;
  const created = await ctx.accounts.createDevice(device.merchantId, name);
  return { status: 200, body: { name: created.name, identifier: created.apiKey } };
}

const DATE = /^(\d{4})\/(\d{2})\/(\d{2})$/;

function parseDay(name: string, value: string): number {
  const m = DATE.exec(value);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
  const valid = m !== null && new Date(ms).getUTCDate() === Number(m[3]) && new Date(ms).getUTCMonth() === Number(m[2]) - 1;
  if (!valid) throw new HttpError(400, { detail: `Invalid ${name} date "${value}": use the format YYYY/MM/DD.` });
  return ms;
}

const listQuerySchema = z.object({ start: z.string().optional(), end: z.string().optional() });

async function listOrders(ctx: SandboxContext, _req: IncomingMessage, device: DeviceRecord, url: URL): Promise<ApiResponse> {
  const query = listQuerySchema.parse({ start: url.searchParams.get("start") ?? undefined, end: url.searchParams.get("end") ?? undefined });
  const now = ctx.clock.now();
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const endDay = query.end === undefined ? today : parseDay("end", query.end);
  const startDay = query.start === undefined ? today - 7 * 86_400_000 : parseDay("start", query.start);
  const snapshots = await ctx.orders.listForDevice(device, startDay, endDay + 86_400_000);
  return { status: 200, body: snapshots.map((s) => paymentView(s.order, s.device, s.transactions)) };
}

async function createOrder(ctx: SandboxContext, req: IncomingMessage, device: DeviceRecord): Promise<ApiResponse> {
  const result = validateCreateOrder(await readFields(req));
  if (!result.ok) return result.status === 400 ? { status: 400, body: result.body } : { status: 404, body: { detail: result.detail } };
  const order = await ctx.orders.createOrder(device, result.input);
  return { status: 200, body: createdOrderView(order, webUrlOf(ctx, order.shortCode)) };
}

async function orderInfo(
  ctx: SandboxContext,
  _req: IncomingMessage,
  device: DeviceRecord,
  _url: URL,
  identifier: string,
): Promise<ApiResponse> {
  const snapshot = await ctx.orders.findForMerchant(device, identifier);
  if (!snapshot) return { status: 404, body: { detail: "No payment with this identifier for this device or merchant." } };
  return { status: 200, body: [paymentView(snapshot.order, snapshot.device, snapshot.transactions)] };
}
