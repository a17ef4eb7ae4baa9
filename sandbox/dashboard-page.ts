// The sandbox's small dashboard (/sandbox/dashboard), standing in for the real
// service's: merchants and devices, each device's key, Secret Key and
// notification URL (editable), a Secret Key regenerator, enable/disable, and the
// latest orders with links to their payment pages.
import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { isoDateTime } from "./clock.js";
import type { SandboxContext } from "./context.js";
import { webUrlOf } from "./context.js";
import { isHttpUrl } from "./drf-fields.js";
import { escapeHtml, readFields, redirect, safeDecode, sendHtml } from "./http-kit.js";

const STYLE = `body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1b1f24}main{max-width:1000px;margin:0 auto;padding:16px}
section{background:#fff;border-radius:10px;padding:14px;margin-bottom:14px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:6px;border-bottom:1px solid #e5e7eb;vertical-align:top}
code{font-family:ui-monospace,monospace;word-break:break-all}input[type=url],input[type=text]{width:100%;box-sizing:border-box;padding:6px;min-width:180px}
button{padding:6px 10px;margin:2px 0;min-height:36px}.notice{background:#dafbe1;padding:8px;border-radius:6px}.err{background:#ffebe9;padding:8px;border-radius:6px}
@media (max-width:700px){table,thead,tbody,tr,th,td{display:block}th{display:none}td{border:none}tr{border-bottom:1px solid #ccc;padding:6px 0}}`;

async function renderDashboard(ctx: SandboxContext, notice: string | null, error: string | null): Promise<string> {
  const merchants = await ctx.store.listMerchants();
  const devices = await ctx.store.listDevices();
  const recent = await ctx.orders.listRecent(25);
  const deviceRows = devices
    .map((d) => {
      const merchant = merchants.find((m) => m.id === d.merchantId);
      const action = `/sandbox/dashboard/devices/${encodeURIComponent(d.apiKey)}`;
      return `<tr><td>${escapeHtml(merchant?.name ?? d.merchantId)}<br><code>${escapeHtml(d.merchantId)}</code></td>
<td>${escapeHtml(d.name)} (#${d.id})<br>${d.enabled ? "enabled" : "<strong>disabled</strong>"}</td>
<td><span class="label">Device key</span><br><code>${escapeHtml(d.apiKey)}</code></td>
<td><span class="label">Secret Key</span><br><code>${escapeHtml(d.secretKeyHex)}</code>
<form method="post" action="${action}"><input type="hidden" name="op" value="regenerate_secret"><button type="submit">Regenerate Secret Key</button></form></td>
<td><form method="post" action="${action}"><input type="hidden" name="op" value="notification_url">
<label for="nu-${d.id}">Notification URL</label><input type="url" id="nu-${d.id}" name="notification_url" value="${escapeHtml(d.notificationUrl ?? "")}" placeholder="https://…">
<button type="submit">Save</button></form>
<form method="post" action="${action}"><input type="hidden" name="op" value="${d.enabled ? "disable" : "enable"}"><button type="submit">${d.enabled ? "Disable" : "Enable"} device</button></form></td></tr>`;
    })
    .join("");
  const orderRows = recent
    .map(
      (s) => `<tr><td><code>${escapeHtml(s.order.identifier)}</code></td><td>${escapeHtml(s.order.status)}</td>
<td>${escapeHtml(s.order.fiatAmount)} ${escapeHtml(s.order.fiat)}</td><td>${escapeHtml(s.order.currencyId ?? "—")}</td>
<td>${escapeHtml(s.device.name)}</td><td>${escapeHtml(isoDateTime(new Date(s.order.createdMs)))}</td>
<td><a href="${escapeHtml(webUrlOf(ctx, s.order.shortCode))}?stay=1">payment page</a></td></tr>`,
    )
    .join("");
  // The icon link is empty: the browser then asks for no /favicon.ico, which the sandbox does not serve.
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>Gateway sandbox dashboard</title><style>${STYLE}</style></head><body><main>
<h1>Gateway sandbox dashboard</h1><p>Sandbox time: <time>${escapeHtml(isoDateTime(ctx.clock.now()))}</time> · API base <code>${escapeHtml(ctx.publicBase())}/api/v1</code></p>
${notice ? `<p class="notice" role="status">${escapeHtml(notice)}</p>` : ""}${error ? `<p class="err" role="alert">${escapeHtml(error)}</p>` : ""}
<section aria-labelledby="dev-h"><h2 id="dev-h">Devices</h2><table><thead><tr><th>Merchant</th><th>Device</th><th>Key</th><th>Secret Key</th><th>Settings</th></tr></thead>
<tbody>${deviceRows}</tbody></table></section>
<section aria-labelledby="new-h"><h2 id="new-h">New sandbox merchant</h2><form method="post" action="/sandbox/dashboard/merchants">
<label for="mname">Name</label> <input type="text" id="mname" name="name" required maxlength="128"> <button type="submit">Create merchant and device</button></form></section>
<section aria-labelledby="ord-h"><h2 id="ord-h">Latest orders</h2><table><thead><tr><th>Identifier</th><th>Status</th><th>Amount</th><th>Currency</th><th>Device</th><th>Created</th><th></th></tr></thead>
<tbody>${orderRows}</tbody></table></section></main></body></html>`;
}

const deviceFormSchema = z.object({
  op: z.enum(["regenerate_secret", "notification_url", "enable", "disable"]),
  notification_url: z.string().max(2048).optional(),
});

const merchantFormSchema = z.object({ name: z.string().trim().min(1).max(128) });

/** Serves /sandbox/dashboard and its forms. Returns false when the path is not the dashboard's. */
export async function handleDashboard(ctx: SandboxContext, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const path = url.pathname.replace(/\/+$/, "");
  if (path === "/sandbox/dashboard" && (req.method === "GET" || req.method === "HEAD")) {
    sendHtml(res, 200, await renderDashboard(ctx, url.searchParams.get("notice"), url.searchParams.get("error")));
    return true;
  }
  if (path === "/sandbox/dashboard/merchants" && req.method === "POST") {
    const parsed = merchantFormSchema.safeParse(await readFields(req));
    if (!parsed.success) {
      redirect(res, 303, "/sandbox/dashboard?error=" + encodeURIComponent("A merchant needs a name of 1-128 characters."));
      return true;
    }
    const { merchant } = await ctx.accounts.createMerchant(parsed.data.name);
    redirect(res, 303, "/sandbox/dashboard?notice=" + encodeURIComponent(`Merchant ${merchant.id} created.`));
    return true;
  }
  const m = /^\/sandbox\/dashboard\/devices\/([^/]+)$/.exec(path);
  if (m && req.method === "POST") {
    const device = await ctx.accounts.findDevice(safeDecode(m[1] as string));
    const parsed = deviceFormSchema.safeParse(await readFields(req));
    if (!device || !parsed.success) {
      redirect(res, 303, "/sandbox/dashboard?error=" + encodeURIComponent("Unknown device or form."));
      return true;
    }
    const form = parsed.data;
    if (form.op === "notification_url") {
      const value = (form.notification_url ?? "").trim();
      if (value !== "" && !isHttpUrl(value)) {
        redirect(res, 303, "/sandbox/dashboard?error=" + encodeURIComponent("The notification URL must be an absolute http(s) URL."));
        return true;
      }
      await ctx.accounts.updateSettings(device, { notificationUrl: value === "" ? null : value });
    } else if (form.op === "regenerate_secret") await ctx.accounts.updateSettings(device, { regenerateSecret: true });
    else await ctx.accounts.updateSettings(device, { enabled: form.op === "enable" });
    redirect(res, 303, "/sandbox/dashboard?notice=" + encodeURIComponent(`Device "${device.name}" updated.`));
    return true;
  }
  return false;
}
