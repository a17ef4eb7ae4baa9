// Owns reading the gateway's JSON without losing the exact text of its numbers.
// Amounts arrive as JSON numbers; JSON.parse would turn them into floats, so
// every number is kept as a JsonNumber holding its source text, and the
// schemas turn that text into exact decimal strings (or safe integers).

export class JsonNumber {
  constructor(readonly text: string) {}
}

interface ReviverContext {
  source?: string;
}

/** The runtime's JSON.parse does not give a number's source text: an amount would be read through a float. */
export class InexactJsonRuntimeError extends Error {
  override name = "InexactJsonRuntimeError";
  constructor() {
    super("JSON.parse gives no number's source text on this runtime (Node 22 does): gateway amounts would be rounded, so none is read");
  }
}

// Node 22's JSON.parse hands the reviver each primitive's source text
// (json-parse-with-source), so the number is never rounded on the way in. A runtime that does
// not (Node 20) is refused loudly rather than rounding amounts without a word.
function keepNumberText(_key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value === "number") {
    if (context?.source === undefined) throw new InexactJsonRuntimeError();
    return new JsonNumber(context.source);
  }
  return value;
}

/** Parses gateway JSON (a leading byte-order mark aside, which JSON.parse refuses); throws SyntaxError on malformed text like JSON.parse. */
export function parseGatewayJson(text: string): unknown {
  return JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text, keepNumberText);
}

/** Parses gateway JSON; returns undefined instead of throwing on malformed text. */
export function tryParseGatewayJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parseGatewayJson(text) };
  } catch (error) {
    if (error instanceof InexactJsonRuntimeError) throw error;
    return { ok: false };
  }
}
