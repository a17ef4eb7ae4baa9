// zod field types that validate like Django REST Framework's serializer fields
// and report DRF's messages, so 400 bodies read `{"field": ["message"]}` as the
// real service's would. Strings are trimmed and measured in code points, as
// DRF does.
import { z } from "zod";
import { Dec } from "./decimal.js";

export const MSG = {
  required: "This field is required.",
  null: "This field may not be null.",
  blank: "This field may not be blank.",
  string: "Not a valid string.",
  number: "A valid number is required.",
  url: "Enter a valid URL.",
  email: "Enter a valid email address.",
  maxLength: (n: number) => `Ensure this field has no more than ${n} characters.`,
  choice: (v: string) => `"${v}" is not a valid choice.`,
  maxDigits: (n: number) => `Ensure that there are no more than ${n} digits in total.`,
  maxDecimals: (n: number) => `Ensure that there are no more than ${n} decimal places.`,
  maxWhole: (n: number) => `Ensure that there are no more than ${n} digits before the decimal point.`,
  minValue: (v: string) => `Ensure this value is greater than or equal to ${v}.`,
  nullCharacters: "Null characters are not allowed.",
  surrogate: (codePoint: number) => `Surrogate characters are not allowed: U+${codePoint.toString(16).toUpperCase()}.`,
} as const;

export function codePointLength(s: string): number {
  return [...s].length;
}

/**
 * The first lone surrogate of a string (one not part of a pair), or null. JSON's "\ud83d\ude00"
 * reaches Python as one character, so only an unpaired half is a surrogate to DRF.
 */
export function loneSurrogate(s: string): number | null {
  const m = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.exec(s);
  return m ? m[0].charCodeAt(0) : null;
}

export interface CharFieldOptions {
  required?: boolean;
  allowNull?: boolean;
  allowBlank?: boolean;
  maxLength?: number;
}

/**
 * A DRF CharField: accepts strings and numbers, trims, checks blank, then runs its validators
 * and reports every one that fails, in DRF's order: length, NUL (ProhibitNullCharactersValidator),
 * lone surrogate (ProhibitSurrogateCharactersValidator). undefined when absent.
 */
export function charField(opts: CharFieldOptions = {}) {
  return z.unknown().transform((v, ctx): string | null | undefined => {
    if (v === undefined) {
      if (opts.required) ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.required });
      return undefined;
    }
    if (v === null) {
      if (opts.allowNull) return null;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.null });
      return z.NEVER;
    }
    if (typeof v !== "string" && typeof v !== "number") {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.string });
      return z.NEVER;
    }
    const s = String(v).trim();
    if (s === "" && !opts.allowBlank) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.blank });
      return z.NEVER;
    }
    const messages: string[] = [];
    if (opts.maxLength !== undefined && codePointLength(s) > opts.maxLength) messages.push(MSG.maxLength(opts.maxLength));
    if (s.includes("\u0000")) messages.push(MSG.nullCharacters);
    const surrogate = loneSurrogate(s);
    if (surrogate !== null) messages.push(MSG.surrogate(surrogate));
    if (messages.length > 0) {
      for (const message of messages) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
      return z.NEVER;
    }
    return s;
  });
}

/** A DRF ChoiceField over string values (letter case matters). */
export function choiceField(choices: ReadonlySet<string>, opts: { maxLength?: number; allowBlank?: boolean } = {}) {
  return z.unknown().transform((v, ctx): string | undefined => {
    if (v === undefined) return undefined;
    if (v === null) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.null });
      return z.NEVER;
    }
    if (typeof v !== "string" && typeof v !== "number") {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.string });
      return z.NEVER;
    }
    const s = String(v).trim();
    if (s === "" && opts.allowBlank) return undefined;
    if (opts.maxLength !== undefined && codePointLength(s) > opts.maxLength) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.maxLength(opts.maxLength) });
      return z.NEVER;
    }
    if (!choices.has(s)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.choice(String(v)) });
      return z.NEVER;
    }
    return s;
  });
}

const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export interface DecimalFieldOptions {
  maxDigits: number;
  decimalPlaces: number;
  minValue: string;
}

/** A DRF DecimalField: a JSON number or a numeric string, checked digit by digit. */
export function decimalField(opts: DecimalFieldOptions) {
  return z.unknown().transform((v, ctx): Dec => {
    const fail = (message: string) => {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message });
      return z.NEVER;
    };
    if (v === undefined) return fail(MSG.required);
    if (v === null) return fail(MSG.null);
    if (typeof v !== "string" && typeof v !== "number") return fail(MSG.number);
    const text = String(v).trim();
    if (!DECIMAL_TEXT.test(text) || text.length > 1000) return fail(MSG.number);
    const d = new Dec(text);
    if (!d.isFinite()) return fail(MSG.number);
    // Digits and places as Python's Decimal.as_tuple() counts them: trailing zeros written count.
    const unsigned = text.replace(/^[+-]/, "");
    const [mantissa = "", expPart] = unsigned.toLowerCase().split("e");
    const exp = expPart === undefined ? 0 : Number(expPart);
    const [whole = "", frac = ""] = mantissa.split(".");
    const digitsText = (whole + frac).replace(/^0+/, "");
    const exponent = exp - frac.length;
    const decimals = exponent < 0 ? -exponent : 0;
    const totalDigits = Math.max(digitsText.length, decimals) + (exponent > 0 ? exponent : 0);
    const wholeDigits = totalDigits - decimals;
    if (totalDigits > opts.maxDigits) return fail(MSG.maxDigits(opts.maxDigits));
    if (decimals > opts.decimalPlaces) return fail(MSG.maxDecimals(opts.decimalPlaces));
    if (wholeDigits > opts.maxDigits - opts.decimalPlaces) return fail(MSG.maxWhole(opts.maxDigits - opts.decimalPlaces));
    if (d.lt(opts.minValue)) return fail(MSG.minValue(opts.minValue));
    return d;
  });
}

// Close to Django's EmailValidator: a dot-atom local part and a dotted domain with a letter TLD.
const EMAIL = /^[-!#$%&'*+/=?^_`{}|~0-9a-z]+(\.[-!#$%&'*+/=?^_`{}|~0-9a-z]+)*@((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+)(?:[a-z]{2,63}|xn--[a-z0-9]{1,59})$/i;

export function isEmail(s: string): boolean {
  return EMAIL.test(s);
}

/** An absolute http(s) URL with a host and no whitespace. */
export function isHttpUrl(s: string): boolean {
  if (/\s/.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "" && /^https?:\/\/[^/]/i.test(s);
  } catch {
    return false;
  }
}

/** Groups zod issues by top-level field, DRF style. */
export function drfErrors(error: z.ZodError): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? String(issue.path[0]) : "non_field_errors";
    (out[key] ??= []).push(issue.message);
  }
  return out;
}
