// Validation of a POST /orders/ body, in the two steps the real service shows:
// field validation (400, `{"field": ["message"]}`) and then the checks the
// service answers with 404 and a `detail` (currency, redirect URLs, amount
// limits). Unknown fields are ignored.
import { z } from "zod";
import { CURRENCIES, findCurrency, findCurrencyIgnoringCase, type CurrencyDefinition } from "./catalogue.js";
import { COUNTRY_CODES } from "./countries.js";
import { Dec } from "./decimal.js";
import { charField, choiceField, decimalField, drfErrors, isEmail, isHttpUrl, MSG } from "./drf-fields.js";
import { DEFAULT_FIAT, eurToFiat, FIAT_CODES, type FiatCode } from "./fiat.js";

const FIAT_SET: ReadonlySet<string> = new Set(FIAT_CODES);

/** The language an order gets when the request names none. */
export const DEFAULT_LANGUAGE = "es";

/** Customer fields and their maximum lengths; all optional and blank allowed. */
export const CUSTOMER_FIELD_LIMITS = {
  full_name: 48,
  phone_number: 15,
  nif: 12,
  home_address: 256,
  address_number: 56,
  address_additional: 64,
  city: 28,
  province: 28,
  zip_code: 12,
} as const;

const optionalText = (maxLength: number) => charField({ allowNull: true, allowBlank: true, maxLength });

const createOrderSchema = z
  .object({
    expected_output_amount: decimalField({ maxDigits: 12, decimalPlaces: 2, minValue: "0.01" }),
    input_currency: charField({ allowNull: true, allowBlank: true }),
    fiat: choiceField(FIAT_SET),
    language: charField({ maxLength: 6 }),
    notes: optionalText(512),
    reference: charField({ allowNull: true, maxLength: 256 }),
    internal_data: charField({ allowNull: true, maxLength: 1024 }),
    merchant_urlok: charField({ allowNull: true, allowBlank: true }),
    merchant_urlko: charField({ allowNull: true, allowBlank: true }),
    merchant_url_standby: charField({ allowNull: true, allowBlank: true }).superRefine((v, ctx) => {
      if (typeof v === "string" && v !== "" && !isHttpUrl(v)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.url });
    }),
    email_client: optionalText(128).superRefine((v, ctx) => {
      if (typeof v === "string" && v !== "" && !isEmail(v)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: MSG.email });
    }),
    country: choiceField(COUNTRY_CODES, { maxLength: 2, allowBlank: true }),
    ...Object.fromEntries(Object.entries(CUSTOMER_FIELD_LIMITS).map(([k, n]) => [k, optionalText(n)])),
  })
  .strip();

export interface CreateOrderInput {
  amount: Dec;
  currency: CurrencyDefinition | null;
  fiat: FiatCode;
  language: string;
  notes: string | null;
  reference: string | null;
  internalData: string | null;
  urlOk: string | null;
  urlKo: string | null;
  urlStandby: string | null;
  customer: Record<string, string>;
}

export type CreateOrderValidation =
  | { ok: true; input: CreateOrderInput }
  | { ok: false; status: 400; body: Record<string, string[]> }
  | { ok: false; status: 404; detail: string };

function blankToNull(v: string | null | undefined): string | null {
  return v === undefined || v === null || v === "" ? null : v;
}

/** The limits of a currency expressed in an order's fiat (min, and max or null). */
export function limitsInFiat(def: CurrencyDefinition, fiat: FiatCode): { min: Dec; max: Dec | null } {
  return {
    min: eurToFiat(new Dec(def.minAmountEur), fiat),
    max: def.maxAmountEur === null ? null : eurToFiat(new Dec(def.maxAmountEur), fiat),
  };
}

/** Why an amount is outside a currency's limits, or null when it fits. */
export function amountLimitProblem(def: CurrencyDefinition, amount: Dec, fiat: FiatCode): string | null {
  const { min, max } = limitsInFiat(def, fiat);
  if (amount.lt(min)) {
    return `Amount ${amount.toFixed(2)} ${fiat} is below the minimum amount of ${min.toFixed(2)} ${fiat} for ${def.symbol}.`;
  }
  if (max !== null && amount.gt(max)) {
    return `Amount ${amount.toFixed(2)} ${fiat} is above the maximum amount of ${max.toFixed(2)} ${fiat} for ${def.symbol}.`;
  }
  return null;
}

export function unknownCurrencyDetail(symbol: string): string {
  const near = findCurrencyIgnoringCase(symbol);
  return near
    ? `Currency "${symbol}" not found. Symbols are case-sensitive: did you mean "${near.symbol}"?`
    : `Currency "${symbol}" not found. Use a symbol from GET /currencies (one of ${CURRENCIES.length} available).`;
}

export function validateCreateOrder(body: Record<string, unknown>): CreateOrderValidation {
  const parsed = createOrderSchema.safeParse(body);
  if (!parsed.success) return { ok: false, status: 400, body: drfErrors(parsed.error) };
  const f = parsed.data as z.infer<typeof createOrderSchema> & Record<string, string | null | undefined>;

  const symbol = blankToNull(f.input_currency);
  let currency: CurrencyDefinition | null = null;
  if (symbol !== null) {
    const found = findCurrency(symbol);
    if (!found) return { ok: false, status: 404, detail: unknownCurrencyDetail(symbol) };
    currency = found;
  }

  const urlOk = blankToNull(f.merchant_urlok);
  const urlKo = blankToNull(f.merchant_urlko);
  for (const [name, value] of [["merchant_urlok", urlOk], ["merchant_urlko", urlKo]] as const) {
    if (value === null && currency === null) {
      return { ok: false, status: 404, detail: `${name} is required when input_currency is omitted.` };
    }
    if (value !== null && !isHttpUrl(value)) {
      return { ok: false, status: 404, detail: `${name} is not a valid absolute http(s) URL.` };
    }
  }

  const fiat = (f.fiat ?? DEFAULT_FIAT) as FiatCode;
  const amount = f.expected_output_amount;
  if (currency !== null) {
    const problem = amountLimitProblem(currency, amount, fiat);
    if (problem) return { ok: false, status: 404, detail: problem };
  }

  const customer: Record<string, string> = {};
  for (const key of [...Object.keys(CUSTOMER_FIELD_LIMITS), "email_client", "country"]) {
    const v = f[key];
    if (typeof v === "string" && v !== "") customer[key] = v;
  }

  return {
    ok: true,
    input: {
      amount,
      currency,
      fiat,
      // SPEC.md names "ES" as the default, which is what the service answered in 2022; since
      // 2023 every recorded order created without a language comes back with "es".
      language: f.language ?? DEFAULT_LANGUAGE,
      notes: f.notes ?? null,
      reference: f.reference ?? null,
      internalData: f.internal_data ?? null,
      urlOk,
      urlKo,
      urlStandby: blankToNull(f.merchant_url_standby),
      customer,
    },
  };
}
