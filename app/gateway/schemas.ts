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
 * The most digits an amount in a response may take written out (before and after the point).
 * Coins' smallest units are 18 places at most, and amounts run to a few digits before the point;
 * the bound keeps an exponent form such as 1e-1000000000 from being written out as a billion digits.
 */
const MAX_AMOUNT_DIGITS = 80;

/** The largest exponent an amount's text may carry, whatever its digits (decimal.js reads 1e-9000000000000001 as 0). */
const MAX_EXPONENT = 1_000;

/** How many digits `decimal` takes written out, from its exponent and places, without writing it. */
function positionalDigits(decimal: Decimal): number {
  return Math.max(decimal.e + 1, 1) + decimal.decimalPlaces();
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
  // An exponent beyond decimal.js's range reads as 0 (or Infinity, refused above): judged by its text.
  const exponent = /e([+-]?\d+)$/i.exec(text)?.[1];
  if (positionalDigits(decimal) > MAX_AMOUNT_DIGITS || (exponent !== undefined && Math.abs(Number(exponent)) > MAX_EXPONENT)) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: `amount must take at most ${MAX_AMOUNT_DIGITS} digits written out` });
    return z.NEVER;
  }
  // Exponent forms ("1e-7") become positional; other texts are kept verbatim.
  return exponent !== undefined || text.startsWith("-") ? decimal.abs().toFixed() : text;
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

/**
 * A list read element by element: those `schema` reads, and for each other one what `identify`
 * can still tell of it, with where the schema refused it. One element the app cannot read is
 * set aside (the client logs it) rather than making the whole list unreadable with it.
 */
function readElements<S extends z.ZodTypeAny, U>(
  elements: unknown[],
  schema: S,
  identify: (element: unknown) => U,
): { read: z.output<S>[]; unreadable: (U & { path: (string | number)[]; reason: string })[] } {
  const read: z.output<S>[] = [];
  const unreadable: (U & { path: (string | number)[]; reason: string })[] = [];
  for (const element of elements) {
    const parsed = schema.safeParse(element);
    if (parsed.success) {
      read.push(parsed.data as z.output<S>);
      continue;
    }
    const issue = parsed.error.issues[0];
    unreadable.push({ ...identify(element), path: issue?.path ?? [], reason: issue?.message ?? "invalid" });
  }
  return { read, unreadable };
}

export const currencySchema = z.object({
  symbol: z.string().min(1).max(24),
  name: z.string().min(1).max(32),
  min_amount: decimalStringSchema,
  max_amount: decimalStringSchema.nullable(),
  // Never shown by the app: a coin without an icon yet (null) or with a relative path stays readable.
  image: httpUrlSchema.nullable().catch(null),
  blockchain: z.string().min(1),
});
export type GatewayCurrency = z.infer<typeof currencySchema>;

/** GET /currencies: the coins read, and where the schema refused the others. */
export interface GatewayCurrencyList {
  currencies: GatewayCurrency[];
  unreadable: { symbol: string | null; path: (string | number)[]; reason: string }[];
}

/**
 * Read coin by coin, as the order listing is: one coin the app cannot read is set aside (the
 * client logs it) instead of taking every other coin, and so every payment page's choice and
 * every device connection, with it. A list of which no coin can be read is refused whole.
 */
export const currenciesResponseSchema = z.array(z.unknown()).transform((elements, ctx): GatewayCurrencyList => {
  const { read: currencies, unreadable } = readElements(elements, currencySchema, (element) => {
    const symbol = z.object({ symbol: z.string() }).safeParse(element);
    return { symbol: symbol.success ? symbol.data.symbol.slice(0, 24) : null };
  });
  if (elements.length > 0 && currencies.length === 0) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: `none of the ${elements.length} coins could be read (${unreadable[0]?.path.join(".")}: ${unreadable[0]?.reason})` });
    return z.NEVER;
  }
  return { currencies, unreadable };
});

/**
 * Text the gateway's text fields take: Django REST framework's CharField always refuses a NUL
 * (ProhibitNullCharactersValidator) and an unpaired surrogate (ProhibitSurrogateCharactersValidator)
 * with a 400, which for an order is a final refusal; such a value is caught before sending.
 */
function gatewayText<T extends z.ZodTypeAny & z.ZodType<string>>(schema: T) {
  return schema.refine(
    (value: string) => !value.includes("\u0000") && !/\p{Cs}/u.test(value),
    "must not contain a NUL character or an unpaired surrogate (the gateway refuses both)",
  );
}

export const deviceCreateRequestSchema = z.object({ name: gatewayText(z.string().min(1).max(128)) }).strict();
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

/**
 * A field the app only shows, never settles on. Older versions of the gateway leave some of
 * them out (a Payment recorded from its test environment in 2022 has no merchant_device,
 * url_standby, internal_data, tag_memo, percentage or received_amount): a missing one reads as
 * null, "not reported", never as a made-up value (a missing amount is not 0). One that is
 * present must still be well formed.
 */
function shownOnly<T extends z.ZodTypeAny>(schema: T) {
  return schema.nullable().default(null);
}

/**
 * A Payment (order) as returned by GET /orders/ and GET /orders/info/{identifier}. Required:
 * what settling a payment and finding its order rely on (identifier, reference, status, fiat
 * and amounts, currency and address, datetimes, transactions); the rest is shownOnly.
 */
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
  received_amount: shownOnly(jsonAmountSchema),
  currency_id: z.string().min(1).max(24).nullable(),
  merchant_device_id: shownOnly(jsonIntegerSchema),
  merchant_device: shownOnly(z.string()),
  address: z.string().nullable(),
  // "" when none in reads; null is seen in creation responses. Shown with the address (a coin
  // that needs it loses the shopper's funds without it), so a read that does not report it at
  // all leaves it undefined: what the creation answer gave is kept, not erased.
  tag_memo: z.string().nullable().optional(),
  url_ok: shownOnly(httpUrlSchema),
  url_ko: shownOnly(httpUrlSchema),
  url_standby: shownOnly(httpUrlSchema),
  expired_time: isoDateTimeSchema.nullable(),
  good_fee: shownOnly(z.boolean()),
  safe: shownOnly(z.boolean()),
  rbf: shownOnly(z.boolean()),
  percentage: shownOnly(jsonAmountSchema),
  language: shownOnly(z.string()),
  notes: shownOnly(z.string()),
  internal_data: shownOnly(z.string()),
  transactions: z.array(gatewayTransactionSchema),
});
export type GatewayOrder = z.infer<typeof gatewayOrderSchema>;

/** An element of a GET /orders/ answer that is not a readable order: what little it tells. */
export interface UnreadableListedOrder {
  /** Its identifier, when the element has a UUID there; null otherwise. */
  identifier: GatewayOrderId | null;
  /** Its reference: text, null for none, undefined when the element does not tell. */
  reference: string | null | undefined;
  /** Where the element breaks the order schema, and how. */
  path: (string | number)[];
  reason: string;
}

/** GET /orders/: the orders read, and the elements that could not be. */
export interface GatewayOrderListing {
  orders: GatewayOrder[];
  /**
   * An order a caller looks for that is not in `orders` may be one of these, unless the
   * element's identifier or reference rules it out: then it could not be read, which does not
   * show it to be absent.
   */
  unreadable: UnreadableListedOrder[];
}

const unreadableElementSchema = z
  .object({
    identifier: gatewayOrderIdSchema.nullable().catch(null),
    reference: z.string().nullable().optional().catch(undefined),
  })
  .catch({ identifier: null, reference: undefined });

/** A listing is read element by element (readElements): one order the app cannot read is set aside. */
export const ordersListResponseSchema = z.array(z.unknown()).transform((elements): GatewayOrderListing => {
  const { read: orders, unreadable } = readElements(elements, gatewayOrderSchema, (element) => {
    const { identifier, reference } = unreadableElementSchema.parse(element);
    return { identifier, reference };
  });
  return { orders, unreadable };
});

/**
 * The listed order with this reference that `accepts` takes; null when the listing shows there
 * is none; "unknown" when it cannot tell, because an element it could not read may be that order.
 */
export function listedOrderByReference(
  listing: GatewayOrderListing,
  reference: string,
  accepts: (order: GatewayOrder) => boolean = () => true,
): GatewayOrder | null | "unknown" {
  const found = listing.orders.find((order) => order.reference === reference && accepts(order));
  if (found) return found;
  return listing.unreadable.some((element) => element.reference === undefined || element.reference === reference) ? "unknown" : null;
}

/** GET /orders/info/{identifier} answers an array holding exactly the one order. */
export const orderInfoResponseSchema = z
  .array(gatewayOrderSchema)
  .length(1, "expected exactly one order")
  .transform((orders) => orders[0] as GatewayOrder);

// ---------------------------------------------------------------------------
// POST /orders/

/** The significant digits a Python float (the gateway reads the amount into one) always keeps exactly. */
const AMOUNT_MAX_SIGNIFICANT_DIGITS = 15;

// Refinements run even after an earlier one failed, hence the guards.
const positiveAmountSchema = decimalStringSchema
  .refine((v) => !isDecimalText(v) || new Decimal(v).greaterThan(0), "must be greater than zero")
  .refine(
    (v) => !isDecimalText(v) || new Decimal(v).precision() <= AMOUNT_MAX_SIGNIFICANT_DIGITS,
    `must have at most ${AMOUNT_MAX_SIGNIFICANT_DIGITS} significant digits (the gateway reads the amount as a float)`,
  );

/**
 * The e-mail addresses the gateway takes: its order serializer checks email_client with
 * Django's EmailValidator. This is that rule in its plain ASCII forms: a dot-atom local part,
 * then labels of 1-63 letters, digits and inner hyphens (none starting or ending with "-"),
 * then a top-level label of 2-63 letters or an "xn--" one. The validator's rarer forms (a
 * quoted local part, an IP literal, "localhost", a Unicode domain) are refused here, as by the
 * sandbox: an address left out costs nothing the order needs, one the gateway refuses costs
 * the order.
 */
const GATEWAY_EMAIL =
  /^[-!#$%&'*+/=?^_`{}|~0-9a-z]+(?:\.[-!#$%&'*+/=?^_`{}|~0-9a-z]+)*@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9]{1,59})$/i;

/** The e-mail addresses the order request takes (the customer fields leave out any other). */
export const gatewayEmailSchema = z.string().max(128).regex(GATEWAY_EMAIL, "must be an e-mail address the gateway's EmailValidator accepts");

export const createOrderRequestSchema = z
  .object({
    expected_output_amount: positiveAmountSchema,
    input_currency: gatewayText(z.string().min(1).max(24)).optional(),
    fiat: fiatCodeSchema.optional(),
    language: gatewayText(z.string().min(1).max(6)).optional(),
    notes: gatewayText(z.string().max(512)).optional(),
    reference: gatewayText(z.string().min(1).max(256)).optional(),
    internal_data: gatewayText(z.string().min(1).max(1024)).optional(),
    merchant_urlok: gatewayText(httpUrlSchema).optional(),
    merchant_urlko: gatewayText(httpUrlSchema).optional(),
    merchant_url_standby: gatewayText(httpUrlSchema).nullable().optional(),
    full_name: gatewayText(z.string().max(48)).optional(),
    email_client: gatewayEmailSchema.optional(),
    phone_number: gatewayText(z.string().max(15)).optional(),
    nif: gatewayText(z.string().max(12)).optional(),
    home_address: gatewayText(z.string().max(256)).optional(),
    address_number: gatewayText(z.string().max(56)).optional(),
    address_additional: gatewayText(z.string().max(64)).optional(),
    city: gatewayText(z.string().max(28)).optional(),
    province: gatewayText(z.string().max(28)).optional(),
    zip_code: gatewayText(z.string().max(12)).optional(),
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

/**
 * Body of a Django REST framework validation error (400): `{"field": ["message", ...],
 * "non_field_errors": ["message"]}`. Read leniently; the client keeps only what has this shape.
 */
export const gatewayFieldErrorsBodySchema = z.record(z.string(), z.unknown());

/** A field's name in a DRF field-error body. */
export const DRF_FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/**
 * A DRF field-error body as the gateway writes one, read strictly: at least one field, each
 * a field's name with a list of text messages. What tells the gateway's own refusal from a
 * page of something in front of it (an API gateway's {"message": "no route matched"}).
 */
export const gatewayFieldErrorsRefusalSchema = z
  .record(z.string().regex(DRF_FIELD_NAME), z.array(z.string()).nonempty())
  .refine((body) => Object.keys(body).length > 0, "no field");
