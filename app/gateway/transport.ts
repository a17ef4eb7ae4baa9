// Owns one HTTP exchange with the gateway: send, wait at most timeoutMs for the
// whole answer, and say what happened in terms the retry rules need: an
// answer, a timeout, or a connection failure known (or not) to have happened
// before the request left.

export type FetchFunction = typeof fetch;

export interface OutgoingRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
}

export type TransportOutcome =
  | { kind: "response"; status: number; headers: Headers; text: string }
  | { kind: "timeout"; cause: unknown }
  | { kind: "network"; code: string | null; beforeSend: boolean; cause: unknown };

// Failures that happen while opening the connection, so the service cannot
// have seen the request. Anything else (a reset, a socket closed mid-answer)
// may have happened after the request was received.
const BEFORE_SEND_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function errorCodes(error: unknown, seen = new Set<unknown>()): string[] {
  if (typeof error !== "object" || error === null || seen.has(error)) return [];
  seen.add(error);
  const codes: string[] = [];
  if ("code" in error && typeof error.code === "string") codes.push(error.code);
  if (error instanceof AggregateError) {
    for (const inner of error.errors) codes.push(...errorCodes(inner, seen));
  }
  if ("cause" in error) codes.push(...errorCodes(error.cause, seen));
  return codes;
}

export function classifyNetworkError(error: unknown): { code: string | null; beforeSend: boolean } {
  const codes = errorCodes(error);
  const beforeSend = codes.length > 0 && codes.every((code) => BEFORE_SEND_CODES.has(code));
  return { code: codes[0] ?? null, beforeSend };
}

export async function sendOnce(fetchFn: FetchFunction, request: OutgoingRequest, timeoutMs: number): Promise<TransportOutcome> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const response = await fetchFn(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      // A followed redirect would turn a POST into a GET; a 3xx is reported instead.
      redirect: "manual",
    });
    const text = await response.text();
    return { kind: "response", status: response.status, headers: response.headers, text };
  } catch (error) {
    if (timedOut) return { kind: "timeout", cause: error };
    return { kind: "network", ...classifyNetworkError(error), cause: error };
  } finally {
    clearTimeout(timer);
  }
}
