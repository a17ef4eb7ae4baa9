// Reading back JSON the app stored itself (a timeline entry's detail, say): a text that is not
// JSON, or not of the shape asked for (written by an older release, or damaged), reads as none
// instead of failing the page or pass that reads it.
import type { z } from "zod";

/** `text` parsed as JSON and read with `schema`; null when it is not JSON or not of that shape. */
export function parseStoredJson<S extends z.ZodTypeAny>(schema: S, text: string | null): z.output<S> | null {
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? (parsed.data as z.output<S>) : null;
}
