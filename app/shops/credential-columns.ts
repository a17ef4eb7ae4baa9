// The shop row's credential columns, emptied, as columns to write, and which payments began on
// an environment's retired credentials. A module of its own, with no imports, so that the
// retention pass (read by the configuration) can use it without loading the Shopify library
// through shop-credentials.

/** An environment's credentials in use, emptied, with the digest of their device key. */
export const NO_CREDENTIALS = {
  live: { liveDeviceKeyEnc: null, liveSecretKeyEnc: null, liveDeviceKeyHint: null, liveDeviceKeyHash: null },
  sandbox: { sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null, sandboxDeviceKeyHint: null, sandboxDeviceKeyHash: null },
} as const;

/** An environment's retired credentials, emptied, with the time they were retired. */
export const NO_RETIRED_CREDENTIALS = {
  live: { liveRetiredDeviceKeyEnc: null, liveRetiredSecretKeyEnc: null, liveRetiredAt: null },
  sandbox: { sandboxRetiredDeviceKeyEnc: null, sandboxRetiredSecretKeyEnc: null, sandboxRetiredAt: null },
} as const;

/** The columns that say whether an environment holds retired credentials, and since when. */
export interface RetirementColumns {
  liveRetiredDeviceKeyEnc: string | null;
  liveRetiredAt: Date | null;
  sandboxRetiredDeviceKeyEnc: string | null;
  sandboxRetiredAt: Date | null;
}

/**
 * Whether the environment holds retired credentials, and when they were taken out of use: null
 * when it holds none. A pair retired by an instance of the release before this one (during a
 * rolling deploy) has no time until the retention pass records one ("unknown"): until then
 * every payment counts as begun on it, as before times were recorded.
 */
export function retirement(shop: RetirementColumns, env: "live" | "sandbox"): { at: Date | "unknown" } | null {
  const [sealed, at] = env === "live" ? [shop.liveRetiredDeviceKeyEnc, shop.liveRetiredAt] : [shop.sandboxRetiredDeviceKeyEnc, shop.sandboxRetiredAt];
  if (sealed === null) return null;
  return { at: at ?? "unknown" };
}

/**
 * Whether a payment began on the environment's retired credentials: its gateway order was
 * requested before they were taken out of use. The order is made on the credentials in use when
 * it is requested, which is not always when the payment is created: on the app's own page it is
 * made when the shopper picks the coin, and a Shopify retry of a session whose order was never
 * made requests it then, both perhaps long after, on the device in use by that time. So the
 * time compared is orderRequestedAt (written just before each request that may create the
 * order, and at a coin pick), and createdAt only for a payment that has requested none yet.
 * Only such a payment keeps the retired credentials, is read with them, or has its
 * notifications verified with their Secret Key; one requested since began on the credentials
 * that replaced them, or on none.
 *
 * One window remains: a request that read the shop's credentials just before a replacement
 * and wrote orderRequestedAt just after it is sent with the replaced pair, yet counts as begun
 * on the new one. That takes a replacement within the same instant as the request.
 */
export function beganOnRetiredCredentials(shop: RetirementColumns, env: "live" | "sandbox", payment: { createdAt: Date; orderRequestedAt: Date | null }): boolean {
  const retired = retirement(shop, env);
  if (retired === null) return false;
  return retired.at === "unknown" || (payment.orderRequestedAt ?? payment.createdAt).getTime() < retired.at.getTime();
}

/** A condition on an environment's payments: those begun on its retired credentials (beganOnRetiredCredentials). */
export function paymentsOnRetiredCredentials(shop: RetirementColumns, env: "live" | "sandbox") {
  const retired = retirement(shop, env);
  // None when it holds none.
  if (retired === null) return { id: { in: [] as string[] } };
  if (retired.at === "unknown") return {};
  return { OR: [{ orderRequestedAt: { lt: retired.at } }, { orderRequestedAt: null, createdAt: { lt: retired.at } }] };
}

/**
 * A condition on an environment's payments: those that may have begun on its credentials in use,
 * all but those begun on its retired credentials. Payments made on credentials deleted before
 * (no payment was followed on them then) count too: that errs on the side of keeping.
 */
export function paymentsOnCurrentCredentials(shop: RetirementColumns, env: "live" | "sandbox") {
  const retired = retirement(shop, env);
  if (retired === null || retired.at === "unknown") return {};
  // The complement of paymentsOnRetiredCredentials: the order requested since, or none requested and the payment created since.
  return { OR: [{ orderRequestedAt: { gte: retired.at } }, { orderRequestedAt: null, createdAt: { gte: retired.at } }] };
}

/** Every credential the shop holds, in use or retired, emptied (an uninstall). */
export const NO_CREDENTIALS_AT_ALL = { ...NO_CREDENTIALS.live, ...NO_CREDENTIALS.sandbox, ...NO_RETIRED_CREDENTIALS.live, ...NO_RETIRED_CREDENTIALS.sandbox } as const;
