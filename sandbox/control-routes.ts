// The sandbox-only endpoints under /sandbox (no X-Device-Id): merchant sign-up,
// device settings, order simulation actions, the clock, webhook fault modes
// and delivery records, and injected gateway faults. They stand in for the
// real service's dashboard and for the events of a real blockchain.
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { isoDateTime } from "./clock.js";
import type { SandboxContext } from "./context.js";
import { isHttpUrl } from "./drf-fields.js";
import { FAULT_ENDPOINTS, FAULT_KINDS } from "./gateway-faults.js";
import { HttpError, isFieldMap, readBodyData, safeDecode, sendJson, sendPlainJson } from "./http-kit.js";
import type { OrderAction } from "./order-service.js";
import { paymentView } from "./payment-view.js";
import type { DeviceRecord } from "./store.js";
import { WEBHOOK_FAULT_MODES } from "./webhook-dispatcher.js";

function jsonKindOf(data: unknown): string {
  if (data === null) return "null";
  if (Array.isArray(data)) return "an array";
  return `a ${typeof data}`;
}

/**
 * Reads and validates a control call's body. Every bad body answers {"detail": ...}: 400 for
 * unreadable JSON or multipart, a JSON value that is not an object, or fields that fail the schema;
 * 413 for a body too large and 415 for another content type (both from readBodyData).
 */
async function readBodyAs<T extends z.ZodTypeAny>(schema: T, req: IncomingMessage): Promise<z.infer<T>> {
  const data = await readBodyData(req);
  if (!isFieldMap(data)) throw new HttpError(400, { detail: `The body must be a JSON object, not ${jsonKindOf(data)}.` });
  const r = schema.safeParse(data);
  if (!r.success) {
    const detail = r.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
    throw new HttpError(400, { detail });
  }
  return r.data;
}

export function deviceSettingsView(device: DeviceRecord): Record<string, unknown> {
  return {
    merchant_id: device.merchantId,
    merchant_device_id: device.id,
    name: device.name,
    identifier: device.apiKey,
    secret_key: device.secretKeyHex,
    notification_url: device.notificationUrl,
    enabled: device.enabled,
  };
}

const notificationUrl = z
  .string()
  .max(2048)
  .refine(isHttpUrl, "must be an absolute http(s) URL")
  .nullable();

const merchantSchema = z.object({ name: z.string().trim().min(1).max(128) });

const settingsSchema = z
  .object({
    notification_url: notificationUrl.optional(),
    secret_key: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, "must be 64 hex characters (32 bytes)")
      .optional(),
    regenerate_secret: z.literal(true).optional(),
    enabled: z.boolean().optional(),
  })
  .refine((v) => !(v.secret_key && v.regenerate_secret), "give either secret_key or regenerate_secret, not both");

const actionSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("choose_currency"), currency: z.string().min(1).max(24) }),
  z.object({ action: z.literal("pay"), amount: z.string().min(1).max(40) }),
  z.object({ action: z.literal("confirm") }),
  z.object({ action: z.literal("confirm_once") }),
  z.object({ action: z.literal("fail") }),
  z.object({ action: z.literal("expire") }),
  z.object({ action: z.literal("complete_by_merchant") }),
  z.object({ action: z.literal("delete") }),
]);

const clockSchema = z.object({ advance_seconds: z.number().finite().min(0).max(10 * 365 * 86_400) });

const webhookFaultSchema = z.object({
  mode: z.enum(WEBHOOK_FAULT_MODES),
  delay_ms: z.number().int().min(0).max(600_000).optional(),
  count: z.number().int().min(1).max(1_000_000).optional(),
});

const gatewayFaultSchema = z
  .object({
    endpoint: z.enum(FAULT_ENDPOINTS),
    kind: z.enum(FAULT_KINDS),
    count: z.number().int().min(1).max(1_000_000).default(1),
    after_create: z.boolean().optional(),
  })
  .refine((f) => !(f.kind === "http_429" && f.after_create === true), {
    path: ["after_create"],
    message: "an http_429 cannot come after the work is done: the gateway's throttles answer before the view runs",
  })
  .refine((f) => !((f.kind === "http_404" || f.kind === "proxy_400") && f.after_create === true), {
    path: ["after_create"],
    message: "an http_404 or a proxy_400 cannot come after the work is done: it refuses the request",
  });

function clockView(ctx: SandboxContext): Record<string, unknown> {
  return { now: isoDateTime(ctx.clock.now()), offset_seconds: ctx.clock.offset / 1000 };
}

async function deviceOr404(ctx: SandboxContext, key: string): Promise<DeviceRecord> {
  const device = await ctx.accounts.findDevice(key);
  if (!device) throw new HttpError(404, { detail: "No device with this key." });
  return device;
}

function faultsView(ctx: SandboxContext): Record<string, unknown> {
  return {
    faults: ctx.faults.list().map((f) => ({ endpoint: f.endpoint, kind: f.kind, remaining: f.remaining, after_create: f.afterCreate })),
  };
}

/** Handles /sandbox/* JSON endpoints. Returns false when no route matched. */
export async function handleControl(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const path = url.pathname.replace(/\/+$/, "");
  const method = req.method ?? "GET";
  let m: RegExpExecArray | null;

  if (path === "/sandbox/merchants" && method === "POST") {
    const body = await readBodyAs(merchantSchema, req);
    const { merchant, device } = await ctx.accounts.createMerchant(body.name);
    sendPlainJson(res, 200, {
      merchant_id: merchant.id,
      device: { name: device.name, identifier: device.apiKey, secret_key: device.secretKeyHex, notification_url: device.notificationUrl },
    });
    return true;
  }

  if ((m = /^\/sandbox\/devices\/([^/]+)\/settings$/.exec(path))) {
    const device = await deviceOr404(ctx, safeDecode(m[1] as string));
    if (method === "GET") {
      sendPlainJson(res, 200, deviceSettingsView(device));
      return true;
    }
    if (method === "POST") {
      const body = await readBodyAs(settingsSchema, req);
      const updated = await ctx.accounts.updateSettings(device, {
        notificationUrl: body.notification_url,
        secretKeyHex: body.secret_key,
        regenerateSecret: body.regenerate_secret,
        enabled: body.enabled,
      });
      sendPlainJson(res, 200, deviceSettingsView(updated));
      return true;
    }
  }

  if ((m = /^\/sandbox\/devices\/([^/]+)\/webhook-faults$/.exec(path))) {
    const device = await deviceOr404(ctx, safeDecode(m[1] as string));
    if (method === "POST") {
      const body = await readBodyAs(webhookFaultSchema, req);
      ctx.dispatcher.setFault(device.id, { mode: body.mode, delayMs: body.delay_ms ?? 0, remaining: body.count ?? null });
    } else if (method !== "GET") return false;
    const f = ctx.dispatcher.getFault(device.id);
    sendPlainJson(res, 200, { mode: f.mode, delay_ms: f.delayMs, count: f.remaining });
    return true;
  }

  if ((m = /^\/sandbox\/orders\/([^/]+)\/actions$/.exec(path)) && method === "POST") {
    const body = await readBodyAs(actionSchema, req) as OrderAction;
    const outcome = await ctx.orders.act(safeDecode(m[1] as string), body);
    if (!outcome.ok) sendPlainJson(res, outcome.status, { detail: outcome.detail });
    else sendJson(res, 200, paymentView(outcome.snapshot.order, outcome.snapshot.device, outcome.snapshot.transactions));
    return true;
  }

  if (path === "/sandbox/clock") {
    if (method === "POST") {
      const body = await readBodyAs(clockSchema, req);
      ctx.clock.advance(Math.round(body.advance_seconds * 1000));
      await ctx.store.setState("clock_offset_ms", String(ctx.clock.offset));
      await ctx.orders.runDueTransitions();
    } else if (method !== "GET") return false;
    sendPlainJson(res, 200, clockView(ctx));
    return true;
  }

  if (path === "/sandbox/tick" && method === "POST") {
    const changed = await ctx.orders.runDueTransitions();
    sendPlainJson(res, 200, { changed, ...clockView(ctx) });
    return true;
  }

  if (path === "/sandbox/webhooks/deliveries" && method === "GET") {
    const order = url.searchParams.get("order") ?? undefined;
    const deviceKey = url.searchParams.get("device");
    const device = deviceKey ? await deviceOr404(ctx, deviceKey) : null;
    const records = await ctx.store.listDeliveries({ orderIdentifier: order, deviceId: device?.id });
    sendPlainJson(
      res,
      200,
      records.map((d) => ({
        id: d.id,
        order: d.orderIdentifier,
        status: d.status,
        url: d.url,
        status_code: d.statusCode,
        ok: d.ok,
        error: d.error,
        fault: d.fault,
        headers: d.headers,
        body: d.body,
        at: isoDateTime(new Date(d.atMs)),
      })),
    );
    return true;
  }

  if (path === "/sandbox/faults") {
    if (method === "POST") {
      const body = await readBodyAs(gatewayFaultSchema, req);
      ctx.faults.add({ endpoint: body.endpoint, kind: body.kind, remaining: body.count, afterCreate: body.after_create ?? false });
    } else if (method === "DELETE") ctx.faults.clear();
    else if (method !== "GET") return false;
    sendPlainJson(res, 200, faultsView(ctx));
    return true;
  }

  return false;
}
