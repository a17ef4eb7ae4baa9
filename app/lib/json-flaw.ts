// What makes a parsed JSON body unusable whatever its schema: nesting past MAX_JSON_DEPTH, or a
// NUL character or an unpaired surrogate in a key or a string, which no text column can store
// on PostgreSQL (refused alike on both databases, before anything is written). Every door that
// takes JSON from outside checks it: the payments API, Shopify's webhooks, the gateway's.

/** How deep a JSON body may nest arrays and objects; Shopify's and the gateway's nest a few levels. */
export const MAX_JSON_DEPTH = 64;

export type JsonFlaw = "too_deep" | "nul_character" | "lone_surrogate";

/** A UTF-16 surrogate with no partner: JSON can carry one escaped, no text column can store it on PostgreSQL. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Why the body is refused, for the caller's 400. */
export const JSON_FLAW_MESSAGES: Record<JsonFlaw, string> = {
  too_deep: `The body may nest arrays and objects at most ${MAX_JSON_DEPTH} levels deep.`,
  nul_character: "No value in the body may contain a NUL character (\\u0000).",
  lone_surrogate: "No value in the body may contain an unpaired UTF-16 surrogate (\\ud800-\\udfff alone).",
};

/** The first flaw of a parsed body, or null. Walked with a stack of its own, so no nesting can exhaust the call stack. */
export function jsonFlaw(value: unknown): JsonFlaw | null {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value: current, depth } = next;
    if (typeof current === "string") {
      if (current.includes("\0")) return "nul_character";
      if (LONE_SURROGATE.test(current)) return "lone_surrogate";
      continue;
    }
    if (current === null || typeof current !== "object") continue;
    if (depth >= MAX_JSON_DEPTH) return "too_deep";
    for (const [key, inner] of Object.entries(current)) {
      if (key.includes("\0")) return "nul_character";
      if (LONE_SURROGATE.test(key)) return "lone_surrogate";
      pending.push({ value: inner, depth: depth + 1 });
    }
  }
  return null;
}
