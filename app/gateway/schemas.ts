// Owns the shapes of everything exchanged with the gateway: the resources it
// returns, the order-creation request, the webhook payload, and the branded
// identifiers and secrets. Bounds come from the interface specification.
// Amounts the service sends as JSON numbers come out as exact decimal strings.

import Decimal from "decimal.js";
import { z } from "zod";
import { isCountryCode } from "./country-codes";
import { DEFAULT_FIAT, FIAT_CODES, fiatMinorDigits } from "./fiat-codes";
import { JsonNumber } from "./json-numbers";
import { isDecimalText } from "./money";
import { GATEWAY_STATUSES, parseGatewayStatus } from "./statuses";

// ---------------------------------------------------------------------------
// Branded identifiers and secrets

/** A device's API key, sent as X-Device-Id. Surrounding whitespace is removed. */
export const deviceKeySchema = z
  .string()
  .trim()
  .min(1, "device key is empty")
  .max(128)
  .regex(/^[\x21-\x7e]+$/, "device key must be printable ASCII without spaces")
  .brand<"DeviceKey">();
export type DeviceKey = z.infer<typeof deviceKeySchema>;

export const gatewayOrderIdSchema = z.string().uuid().brand<"GatewayOrderId">();
export type GatewayOrderId = z.infer<typeof gatewayOrderIdSchema>;

/** A device's webhook Secret Key: hex text that is decoded to bytes before use. */
export const secretKeyHexSchema = z
  .string()
  .regex(/^(?:[0-9a-fA-F]{2})+$/, "secret key must be non-empty, even-length hex")
  .brand<"SecretKeyHex">();
export type SecretKeyHex = z.infer<typeof secretKeyHexSchema>;

// ---------------------------------------------------------------------------
// Building blocks

export const fiatCodeSchema = z.enum(FIAT_CODES);
export type { FiatCode } from "./fiat-codes";

export const gatewayStatusSchema = z.enum(GATEWAY_STATUSES);

/** A status read from the service: unknown codes are kept and flagged, not rejected. */
export const gatewayStatusFieldSchema = z.string().min(1).max(16).transform(parseGatewayStatus);

const isoDateTimeSchema = z.string().datetime({ offset: true });

function isHttpUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

export const httpUrlSchema = z.string().max(2048).refine(isHttpUrl, "must be an absolute http(s) URL");

/** A decimal amount given as text: "1.00", "0.05". */
export const decimalStringSchema = z
  .string()
  .refine(isDecimalText, "must be a plain decimal number such as 12.50")
  .refine((v) => !v.startsWith("-"), "must not be negative");

function jsonNumberText(value: number | JsonNumber): string {
  return value instanceof JsonNumber ? value.text : String(value);
}

/**
 * A JSON number in a response, turned into an exact, non-negative decimal
 * string. Fed by parseGatewayJson it keeps the number's own text ("100.0");
 * a plain JS number (already parsed elsewhere) is written in its shortest form.
 */
export const jsonAmountSchema = z.union([z.number(), z.instanceof(JsonNumber)]).transform((value, ctx) => {
  const text = jsonNumberText(value);
  let decimal: Decimal;
  try {
    decimal = new Decimal(text);
  } catch {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: "not a finite number" });
    return z.NEVER;
  }
  if (!decimal.isFinite()) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: "not a finite number" });
    return z.NEVER;
  }
  if (decimal.isNegative() && !decimal.isZero()) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: "amount must not be negative" });
    return z.NEVER;
  }
  // Exponent forms ("1e-7") become positional; other texts are kept verbatim.
  return /[eE]/.test(text) || text.startsWith("-") ? decimal.abs().toFixed() : text;
});

/** A JSON integer in a response (ids, block numbers). */
export const jsonIntegerSchema = z.union([z.number(), z.instanceof(JsonNumber)]).transform((value, ctx) => {
  const text = jsonNumberText(value);
  const n = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n)) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: "must be an integer" });
    return z.NEVER;
  }
  return n;
});

// ---------------------------------------------------------------------------
// Resources

export const currencySchema = z.object({
  symbol: z.string().min(1).max(24),
  name: z.string().min(1).max(32),
  min_amount: decimalStringSchema,
  max_amount: decimalStringSchema.nullable(),
  image: httpUrlSchema,
  blockchain: z.string().min(1),
});
export type GatewayCurrency = z.infer<typeof currencySchema>;

export const currenciesResponseSchema = z.array(currencySchema);

export const deviceCreateRequestSchema = z.object({ name: z.string().min(1).max(128) }).strict();
export type DeviceCreateRequest = z.infer<typeof deviceCreateRequestSchema>;

export const deviceCreateResponseSchema = z.object({
  name: z.string().min(1).max(128),
  identifier: deviceKeySchema,
});
export type DeviceCreateResponse = z.infer<typeof deviceCreateResponseSchema>;

export const gatewayTransactionSchema = z.object({
  confirmed: z.boolean(),
  currency: z.string().min(1).max(24),
  amount: jsonAmountSchema,
  tx_hash: z.string(),
  block: jsonIntegerSchema.nullable(),
  created_at: isoDateTimeSchema,
});
export type GatewayTransaction = z.infer<typeof gatewayTransactionSchema>;

/** A Payment (order) as returned by GET /orders/ and GET /orders/info/{identifier}. */
export const gatewayOrderSchema = z.object({
  identifier: gatewayOrderIdSchema,
  reference: z.string().min(1).max(256).nullable(),
  created_at: isoDateTimeSchema,
  edited_at: isoDateTimeSchema,
  status: gatewayStatusFieldSchema,
  fiat_amount: jsonAmountSchema,
  fiat: fiatCodeSchema,
  crypto_amount: jsonAmountSchema.nullable(),
  unconfirmed_amount: jsonAmountSchema,
  confirmed_amount: jsonAmountSchema,
  received_amount: jsonAmountSchema,
  currency_id: z.string().min(1).max(24).nullable(),
  merchant_device_id: jsonIntegerSchema,
  merchant_device: z.string(),
  address: z.string().nullable(),
  // "" when none in reads; null is seen in creation responses.
  tag_memo: z.string().nullable(),
  url_ok: httpUrlSchema.nullable(),
  url_ko: httpUrlSchema.nullable(),
  url_standby: httpUrlSchema.nullable(),
  expired_time: isoDateTimeSchema.nullable(),
  good_fee: z.boolean(),
  safe: z.boolean(),
  rbf: z.boolean(),
  percentage: jsonAmountSchema,
  language: z.string(),
  notes: z.string().nullable(),
  internal_data: z.string().nullable(),
  transactions: z.array(gatewayTransactionSchema),
});
export type GatewayOrder = z.infer<typeof gatewayOrderSchema>;

export const ordersListResponseSchema = z.array(gatewayOrderSchema);

/** GET /orders/info/{identifier} answers an array holding exactly the one order. */
export const orderInfoResponseSchema = z
  .array(gatewayOrderSchema)
  .length(1, "expected exactly one order")
  .transform((orders) => orders[0] as GatewayOrder);

// ---------------------------------------------------------------------------
// POST /orders/

// Refinements run even after an earlier one failed, hence the guard.
const positiveAmountSchema = decimalStringSchema.refine(
  (v) => !isDecimalText(v) || new Decimal(v).greaterThan(0),
  "must be greater than zero",
);

/** The e-mail addresses the order request takes (the customer fields leave out any other). */
export const gatewayEmailSchema = z.string().max(128).email();

export const createOrderRequestSchema = z
  .object({
    expected_output_amount: positiveAmountSchema,
    input_currency: z.string().min(1).max(24).optional(),
    fiat: fiatCodeSchema.optional(),
    language: z.string().min(1).max(6).optional(),
    notes: z.string().max(512).optional(),
    reference: z.string().min(1).max(256).optional(),
    internal_data: z.string().min(1).max(1024).optional(),
    merchant_urlok: httpUrlSchema.optional(),
    merchant_urlko: httpUrlSchema.optional(),
    merchant_url_standby: httpUrlSchema.nullable().optional(),
    full_name: z.string().max(48).optional(),
    email_client: gatewayEmailSchema.optional(),
    phone_number: z.string().max(15).optional(),
    nif: z.string().max(12).optional(),
    home_address: z.string().max(256).optional(),
    address_number: z.string().max(56).optional(),
    address_additional: z.string().max(64).optional(),
    city: z.string().max(28).optional(),
    province: z.string().max(28).optional(),
    zip_code: z.string().max(12).optional(),
    country: z.string().length(2).refine(isCountryCode, "must be an ISO 3166-1 alpha-2 code such as ES").optional(),
  })
  .strict()
  .superRefine((request, ctx) => {
    const fiat = request.fiat ?? DEFAULT_FIAT;
    if (isDecimalText(request.expected_output_amount)) {
      const places = new Decimal(request.expected_output_amount).decimalPlaces();
      if (places > fiatMinorDigits(fiat)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ["expected_output_amount"],
          message: `${fiat} allows ${fiatMinorDigits(fiat)} decimal place(s)`,
        });
      }
    }
    // Without a chosen currency the shopper pays on the hosted page and must be
    // sent back from it, so both redirect URLs are needed.
    if (request.input_currency === undefined) {
      for (const field of ["merchant_urlok", "merchant_urlko"] as const) {
        if (request[field] === undefined) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: [field],
            message: "required when input_currency is omitted",
          });
        }
      }
    }
  });
export type CreateOrderRequest = z.input<typeof createOrderRequestSchema>;

const createOrderResponseBase = {
  identifier: gatewayOrderIdSchema,
  reference: z.string().min(1).max(256).nullable(),
  web_url: httpUrlSchema,
  notes: z.string().nullable(),
  fiat: fiatCodeSchema,
  language: z.string(),
};

/** Variant B: no currency chosen yet; the customer picks it on web_url. */
export const createOrderResponseWithoutCurrencySchema = z.object(createOrderResponseBase);
export type CreateOrderResponseWithoutCurrency = z.infer<typeof createOrderResponseWithoutCurrencySchema>;

/** Variant A / API gateway: the crypto payment data is already fixed. */
export const createOrderResponseWithCurrencySchema = z.object({
  ...createOrderResponseBase,
  payment_uri: z.string().min(1),
  // Lightning (BTCL) orders use no address.
  address: z.string().nullable(),
  tag_memo: z.string().nullable(),
  input_currency: z.string().min(1).max(24),
  expected_input_amount: jsonAmountSchema,
  rate: jsonAmountSchema,
});
export type CreateOrderResponseWithCurrency = z.infer<typeof createOrderResponseWithCurrencySchema>;

export type CreateOrderResponse = CreateOrderResponseWithCurrency | CreateOrderResponseWithoutCurrency;

function hasInputCurrency(value: unknown): boolean {
  return typeof value === "object" && value !== null && "input_currency" in value && value.input_currency != null;
}

/**
 * The response shape is chosen by whether input_currency is present, so that a
 * malformed crypto field is reported rather than silently dropped by falling
 * back to the shorter shape.
 */
export const createOrderResponseSchema: z.ZodType<CreateOrderResponse, z.ZodTypeDef, unknown> = z
  .unknown()
  .transform((value, ctx): CreateOrderResponse => {
    const schema = hasInputCurrency(value) ? createOrderResponseWithCurrencySchema : createOrderResponseWithoutCurrencySchema;
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: issue.path, message: issue.message });
      }
      return z.NEVER;
    }
    return parsed.data;
  });

export function hasCryptoPaymentData(response: CreateOrderResponse): response is CreateOrderResponseWithCurrency {
  return "input_currency" in response;
}

// ---------------------------------------------------------------------------
// Webhook payload

/** An optional field that is dropped (undefined) when it does not have the expected shape. */
function untrusted<T extends z.ZodTypeAny>(schema: T) {
  return schema.optional().catch(undefined);
}

/**
 * The body of a webhook. Only identifier is relied on: the webhook is a
 * trigger to read the order, never the truth. Other fields are kept when well
 * formed, dropped when not; unknown keys pass through.
 */
export const gatewayWebhookPayloadSchema = z
  .object({
    identifier: gatewayOrderIdSchema,
    status: untrusted(gatewayStatusFieldSchema),
    fiat_amount: untrusted(jsonAmountSchema),
    crypto_amount: untrusted(jsonAmountSchema.nullable()),
    unconfirmed_amount: untrusted(jsonAmountSchema),
    confirmed_amount: untrusted(jsonAmountSchema),
    received_amount: untrusted(jsonAmountSchema),
    currency: untrusted(z.string().min(1).max(24).nullable()),
    fiat_currency: untrusted(z.string().min(1).max(8)),
    safe: untrusted(z.boolean()),
    reference: untrusted(z.string().max(256).nullable()),
    edited_at: untrusted(isoDateTimeSchema),
  })
  .passthrough();
export type GatewayWebhookPayload = z.infer<typeof gatewayWebhookPayloadSchema>;

/** Body of an error answer, in the shape `{"detail": "..."}`; anything else yields no detail. */
export const gatewayErrorBodySchema = z.object({ detail: z.string().max(2000) });
