// The choices the settings page offers, shared by the page and its server code.
export const CHECKOUT_MODES = [
  { value: "gateway_choice", label: "Shoppers choose the coin on the gateway's payment page" },
  { value: "fixed_coin", label: "Shoppers pay with one fixed coin (on the gateway's payment page)" },
  { value: "app_page", label: "Shoppers pay on this app's own payment page (QR code and address)" },
] as const;

export const GATEWAY_LANGUAGES = [
  { value: "AUTO", label: "The shopper's language (automatic)" },
  { value: "EN", label: "English" },
  { value: "ES", label: "Spanish" },
  { value: "PT", label: "Portuguese" },
  { value: "IT", label: "Italian" },
  { value: "FR", label: "French" },
  { value: "DE", label: "German" },
] as const;

/** The gateway environments whose coins are chosen apart, in the order the page shows them, with the orders each one serves. */
export const COIN_ENVIRONMENTS = [
  { env: "live", title: "Real checkouts (live gateway)", coinLabel: "Coin for real checkouts (live gateway)", gateway: "the live gateway" },
  { env: "sandbox", title: "Shopify test orders (gateway sandbox)", coinLabel: "Coin for Shopify test orders (gateway sandbox)", gateway: "the gateway sandbox" },
] as const;
