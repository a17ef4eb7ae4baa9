// Reads a posted form into a plain object of its text fields (files and repeated names
// are not part of any admin form), ready for a zod schema.
import { z } from "zod";

/** The flag a "Mark as handled" form was shown for (`flagSeen` in payments.server). */
export const FLAG_SEEN = z.string().regex(/^[A-Za-z0-9_-]{22}$/);

export function formFields(form: FormData): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of form.entries()) {
    if (typeof value === "string" && !(name in fields)) fields[name] = value;
  }
  return fields;
}

/**
 * The posted form, or null when the body is not a form at all (JSON, plain text, no content
 * type, a broken multipart body): the caller answers that like any other invalid input, with
 * a 4xx, instead of letting `formData()`'s TypeError become a 500.
 */
export async function postedForm(request: Request): Promise<FormData | null> {
  try {
    return await request.formData();
  } catch {
    return null;
  }
}

/** The posted form's text fields; none when the body is not a form. */
export async function postedFields(request: Request): Promise<Record<string, string>> {
  const form = await postedForm(request);
  return form ? formFields(form) : {};
}
