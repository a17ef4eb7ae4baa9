// Reads a posted form into a plain object of its text fields (files and repeated names
// are not part of any admin form), ready for a zod schema.
export function formFields(form: FormData): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of form.entries()) {
    if (typeof value === "string" && !(name in fields)) fields[name] = value;
  }
  return fields;
}
