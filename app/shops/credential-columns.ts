// The shop row's credential columns, emptied, as columns to write. A module of its own, with no
// imports, so that the retention pass (read by the configuration) can use it without loading
// the Shopify library through shop-credentials.

/** An environment's credentials in use, emptied. */
export const NO_CREDENTIALS = {
  live: { liveDeviceKeyEnc: null, liveSecretKeyEnc: null, liveDeviceKeyHint: null },
  sandbox: { sandboxDeviceKeyEnc: null, sandboxSecretKeyEnc: null, sandboxDeviceKeyHint: null },
} as const;

/** An environment's retired credentials, emptied. */
export const NO_RETIRED_CREDENTIALS = {
  live: { liveRetiredDeviceKeyEnc: null, liveRetiredSecretKeyEnc: null },
  sandbox: { sandboxRetiredDeviceKeyEnc: null, sandboxRetiredSecretKeyEnc: null },
} as const;

/** Every credential the shop holds, in use or retired, emptied (an uninstall). */
export const NO_CREDENTIALS_AT_ALL = { ...NO_CREDENTIALS.live, ...NO_CREDENTIALS.sandbox, ...NO_RETIRED_CREDENTIALS.live, ...NO_RETIRED_CREDENTIALS.sandbox } as const;
