// Serialises JSON the way the real service's Python stack does: floats written
// as Python's repr (100.0, 2.5e-05), non-ASCII escaped, and either json.dumps'
// default spacing (", " and ": ", used for signed webhook bodies) or Django
// REST Framework's compact form (API responses). Amounts arrive as Decimals and
// are written digit for digit, never through a binary float.
import { Dec } from "./decimal.js";

/** A value that Python would hold as a float (a JSON number with a decimal point). */
export class PyFloat {
  readonly value: Dec;
  constructor(value: Dec | string) {
    this.value = typeof value === "string" ? new Dec(value) : value;
  }
}

export type PyJson = null | boolean | string | number | PyFloat | PyJson[] | { [key: string]: PyJson };

export function pyFloat(value: Dec | string): PyFloat {
  return new PyFloat(value);
}

/**
 * Python's repr() of the float nearest to the given decimal. Up to 15 significant
 * digits that is the decimal's own digits; beyond that a binary double cannot
 * hold every digit, so (for writing only) the double's shortest round-trip
 * digits are used, which is what Python itself prints.
 */
export function pythonFloatRepr(input: Dec): string {
  if (!input.isFinite()) throw new Error("non-finite float");
  const d = input.sd() <= 15 ? input : new Dec(Number(input.toString()).toExponential());
  if (d.isZero()) return d.isNegative() ? "-0.0" : "0.0";
  const sign = d.isNegative() ? "-" : "";
  const [mantissa = "0", expText = "0"] = d.abs().toExponential().split("e");
  const exp = Number(expText);
  const digits = mantissa.replace(".", "");
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac === "" ? "0" : frac}`;
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exp).toString().padStart(2, "0");
  return `${sign}${m}e${exp < 0 ? "-" : "+"}${e}`;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

/** A string as Python's json.dumps writes it with ensure_ascii=True. */
export function pythonStringRepr(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    const code = s.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

export interface DumpOptions {
  /** DRF's compact separators ("," and ":") instead of json.dumps' defaults. */
  compact?: boolean;
}

export function pythonJsonDumps(value: PyJson, options: DumpOptions = {}): string {
  const itemSep = options.compact ? "," : ", ";
  const keySep = options.compact ? ":" : ": ";
  const write = (v: PyJson): string => {
    if (v === null) return "null";
    if (v === true) return "true";
    if (v === false) return "false";
    if (typeof v === "string") return pythonStringRepr(v);
    if (typeof v === "number") {
      if (!Number.isSafeInteger(v)) throw new Error("only safe integers may be written as plain numbers");
      return String(v);
    }
    if (v instanceof PyFloat) return pythonFloatRepr(v.value);
    if (Array.isArray(v)) return `[${v.map(write).join(itemSep)}]`;
    return `{${Object.entries(v)
      .map(([k, item]) => `${pythonStringRepr(k)}${keySep}${write(item)}`)
      .join(itemSep)}}`;
  };
  return write(value);
}
