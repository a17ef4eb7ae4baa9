// The body each Shopify webhook topic the app takes must have. The HMAC signs the body and
// nothing else: X-Shopify-Topic, like the shop's header, is not signed, so one delivered body
// posted again under another topic would be taken as that topic's order (a data request's
// body as a shop's redaction, deleting an installed shop). Each topic's body is told by its
// own fields, and refused when it carries another topic's.
import { z } from "zod";

/** Keys that only a body of one of the other topics has. */
function carriesNone(keys: readonly string[]) {
  return (body: Record<string, unknown>) => !keys.some((key) => key in body);
}

const CUSTOMER_REQUEST_KEYS = ["customer", "orders_to_redact", "orders_requested", "data_request"] as const;

/**
 * app/uninstalled: the shop object (id, name, myshopify_domain...). None of its fields is
 * required, since a refusal would be retried and the uninstall never handled: it is told by
 * carrying none of the other topics' fields.
 */
export const appUninstalledBody = z
  .object({})
  .passthrough()
  .refine(carriesNone(["shop_domain", "current", "previous", ...CUSTOMER_REQUEST_KEYS]), "not another topic's body");

/** shop/redact: {shop_id, shop_domain}. */
export const shopRedactBody = z
  .object({ shop_id: z.union([z.number(), z.string()]).optional(), shop_domain: z.string().min(1) })
  .passthrough()
  .refine(carriesNone(CUSTOMER_REQUEST_KEYS), "not a customer request's body");

/** customers/redact: {shop_id, shop_domain, customer, orders_to_redact}. */
export const customersRedactBody = z
  .object({
    customer: z.object({ email: z.string().nullish(), phone: z.string().nullish() }).passthrough(),
    orders_to_redact: z.array(z.union([z.number(), z.string()])),
  })
  .passthrough()
  .refine(carriesNone(["orders_requested", "data_request"]), "not a data request's body");

/** app/scopes_update: {id, previous, current, updated_at}; the scopes the merchant now grants, as Shopify names them. */
export const scopesUpdateBody = z
  .object({
    current: z
      .array(
        z
          .string()
          .max(100)
          .regex(/^[a-z][a-z_]*$/),
      )
      .max(200),
  })
  .passthrough()
  .refine(carriesNone(["shop_domain", "myshopify_domain", ...CUSTOMER_REQUEST_KEYS]), "not another topic's body");

/** customers/data_request: {shop_id, shop_domain, customer, orders_requested, data_request}. */
export const dataRequestBody = z
  .object({
    customer: z.object({ id: z.union([z.number(), z.string()]).nullish(), email: z.string().max(320).nullish(), phone: z.string().max(64).nullish() }).passthrough(),
    // As many as the body holds (MAX_ROUTE_BODY_BYTES bounds it): a refused request would never be taken.
    orders_requested: z.array(z.union([z.number(), z.string()])).nullish(),
    data_request: z.object({ id: z.union([z.number(), z.string()]) }).passthrough().nullish(),
  })
  .passthrough()
  .refine(carriesNone(["orders_to_redact"]), "not a redaction's body");
export type DataRequestBody = z.infer<typeof dataRequestBody>;
