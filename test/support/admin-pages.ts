// The merchant admin over HTTP, as a browser without scripts uses it: pages fetched through the
// development login (DEV_ADMIN_LOGIN), their visible text, the hidden fields of their forms,
// and forms posted back.
import type { Stack } from "./stack";

export interface PageAnswer {
  status: number;
  html: string;
  /** The visible text, scripts and tags removed, entities decoded. */
  text: string;
}

function decodeEntities(html: string): string {
  return html
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

export function pageText(html: string): string {
  const body = html.replace(/<script[\s\S]*?<\/script>/g, " ").replace(/<style[\s\S]*?<\/style>/g, " ");
  return decodeEntities(body.replace(/<!-- -->/g, "").replace(/<[^>]+>/g, " ")).replace(/\s+/g, " ").trim();
}

function adminUrl(stack: Stack, path: string): string {
  const url = new URL(path, stack.app.url);
  url.searchParams.set("shop", stack.shopDomain);
  return url.toString();
}

async function answerOf(response: Response): Promise<PageAnswer> {
  const html = await response.text();
  return { status: response.status, html, text: pageText(html) };
}

export async function getAdminPage(stack: Stack, path: string): Promise<PageAnswer> {
  return answerOf(await fetch(adminUrl(stack, path), { redirect: "manual" }));
}

export async function postAdminForm(stack: Stack, path: string, fields: Record<string, string>): Promise<PageAnswer> {
  return answerOf(await fetch(adminUrl(stack, path), { method: "POST", body: new URLSearchParams(fields), redirect: "manual" }));
}

/** The hidden fields of each `<form method="post">` in the page, in order: what a click on its button posts. */
export function postForms(html: string): Record<string, string>[] {
  return [...html.matchAll(/<form[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/g)].map((form) => {
    const fields: Record<string, string> = {};
    for (const [input] of form[1]!.matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]*)"/.exec(input)?.[1];
      const value = /value="([^"]*)"/.exec(input)?.[1];
      if (name && value !== undefined && /type="hidden"/.test(input)) fields[name] = decodeEntities(value);
    }
    return fields;
  });
}
