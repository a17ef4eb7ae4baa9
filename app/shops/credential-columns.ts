// The shop row's credential columns, emptied, as columns to write, and which payments began on
// an environment's retired credentials. A module of its own, with no imports, so that the
// retention pass (read by the configuration) can use it without loading the Shopify library
// through shop-credentials.

/** An environment's credentials in use, emptied. */
export const NO_CREDENTIALS = {
  live: { liveDeviceKeyEnc: null, liveSecretKeyEnc: null, liveDeviceKeyHint: null },
  sandbox: { sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null, sandboxDeviceKeyHint: null },
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
 * Whether a payment began on the environment's retired credentials: it was created before they
 * were taken out of use (a payment is made on the credentials in use when it starts). Only such
 * a payment keeps them, is read with them, or has its notifications verified with their Secret
 * Key; one made since began on the credentials that replaced them, or on none.
 */
export function beganOnRetiredCredentials(shop: RetirementColumns, env: "live" | "sandbox", payment: { createdAt: Date }): boolean {
  const retired = retirement(shop, env);
  if (retired === null) return false;
  return retired.at === "unknown" || payment.createdAt.getTime() < retired.at.getTime();
}

/** A condition on an environment's payments: those begun on its retired credentials (beganOnRetiredCredentials). */
export function paymentsOnRetiredCredentials(shop: RetirementColumns, env: "live" | "sandbox") {
  const retired = retirement(shop, env);
  // None when it holds none.
  if (retired === null) return { id: { in: [] as string[] } };
  return retired.at === "unknown" ? {} : { createdAt: { lt: retired.at } };
}

/**
 * A condition on an environment's payments: those that may have begun on its credentials in use,
 * all but those begun on its retired credentials. Payments made on credentials deleted before
 * (no payment was followed on them then) count too: that errs on the side of keeping.
 */
export function paymentsOnCurrentCredentials(shop: RetirementColumns, env: "live" | "sandbox") {
  const retired = retirement(shop, env);
  return retired === null || retired.at === "unknown" ? {} : { createdAt: { gte: retired.at } };
}

/** Every credential the shop holds, in use or retired, emptied (an uninstall). */
export const NO_CREDENTIALS_AT_ALL = { ...NO_CREDENTIALS.live, ...NO_CREDENTIALS.sandbox, ...NO_RETIRED_CREDENTIALS.live, ...NO_RETIRED_CREDENTIALS.sandbox } as const;
