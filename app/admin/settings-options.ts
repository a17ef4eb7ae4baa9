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
