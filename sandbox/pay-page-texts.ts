// The hosted payment page's texts in English and Spanish, chosen from the
// order's `language` (anything starting with "es" is Spanish; otherwise English).
import type { OrderStatus } from "./statuses.js";

export type PageLanguage = "en" | "es";

export function pageLanguage(orderLanguage: string): PageLanguage {
  return orderLanguage.trim().toLowerCase().startsWith("es") ? "es" : "en";
}

export interface PageTexts {
  title: string;
  payTo: string;
  amountDue: string;
  chooseCurrency: string;
  chooseHelp: string;
  unavailable: string;
  minimum: string;
  maximum: string;
  scanQr: string;
  qrLabel: string;
  address: string;
  exactAmount: string;
  copy: string;
  copied: string;
  tagMemo: Record<"ripple" | "stellar" | "algorand", string>;
  tagMemoWarning: string;
  lightningInvoice: string;
  expiresIn: string;
  expired: string;
  status: string;
  statuses: Record<OrderStatus, string>;
  redirecting: string;
  backToShop: string;
  received: string;
  /** Under the AC status once every transaction has its first block (safe = true). */
  firstBlockSeen: string;
  sandboxControls: string;
  sandboxNote: string;
  actions: {
    pay_exact: string;
    pay_less: string;
    pay_more: string;
    confirm_once: string;
    confirm: string;
    fail: string;
    expire: string;
    complete_by_merchant: string;
    delete: string;
  };
  notFound: string;
  rate: string;
}

const EN: PageTexts = {
  title: "Crypto payment",
  payTo: "Payment to",
  amountDue: "Amount due",
  chooseCurrency: "Choose a cryptocurrency",
  chooseHelp: "Pick the coin and network you want to pay with.",
  unavailable: "Not available for this amount",
  minimum: "Minimum",
  maximum: "Maximum",
  scanQr: "Scan the QR code with your wallet, or copy the details below.",
  qrLabel: "QR code of the payment request",
  address: "Address",
  exactAmount: "Exact amount to send",
  copy: "Copy",
  copied: "Copied",
  tagMemo: { ripple: "Destination tag", stellar: "Memo", algorand: "Memo (note)" },
  tagMemoWarning: "You must include this destination tag / memo in your payment. Without it your funds will be lost.",
  lightningInvoice: "Lightning invoice",
  expiresIn: "Time left to pay",
  expired: "Time is up",
  status: "Status",
  statuses: {
    NR: "Waiting for you to choose a currency",
    PE: "Waiting for your payment",
    AC: "Payment received, waiting for confirmation",
    IA: "Insufficient amount received",
    CO: "Payment completed",
    CA: "Payment cancelled",
    EX: "Payment expired",
    OC: "Out of condition: the price changed before confirmation",
    FA: "Payment failed",
    DE: "Payment deleted",
    CM: "Completed by the merchant",
  },
  redirecting: "Taking you back to the shop…",
  backToShop: "Back to the shop",
  received: "Received",
  firstBlockSeen: "First block confirmation received (safe): waiting for the gateway to complete the payment.",
  sandboxControls: "Sandbox controls",
  sandboxNote: "Simulation only: the real gateway has no such buttons.",
  actions: {
    pay_exact: "Pay exactly",
    pay_less: "Pay less",
    pay_more: "Pay more",
    // Not worded with "Confirm": the page's "Confirm" button must stay the only one so named.
    confirm_once: "First block only (stays AC)",
    confirm: "Confirm",
    fail: "Fail",
    expire: "Let it expire now",
    complete_by_merchant: "Complete by merchant",
    delete: "Delete",
  },
  notFound: "This payment does not exist.",
  rate: "Rate",
};

const ES: PageTexts = {
  title: "Pago con criptomonedas",
  payTo: "Pago a",
  amountDue: "Importe a pagar",
  chooseCurrency: "Elige una criptomoneda",
  chooseHelp: "Elige la moneda y la red con la que quieres pagar.",
  unavailable: "No disponible para este importe",
  minimum: "Mínimo",
  maximum: "Máximo",
  scanQr: "Escanea el código QR con tu monedero o copia los datos de abajo.",
  qrLabel: "Código QR de la solicitud de pago",
  address: "Dirección",
  exactAmount: "Importe exacto a enviar",
  copy: "Copiar",
  copied: "Copiado",
  tagMemo: { ripple: "Etiqueta de destino (tag)", stellar: "Memo", algorand: "Memo (nota)" },
  tagMemoWarning: "Debes incluir esta etiqueta / memo en tu pago. Sin ella perderás tus fondos.",
  lightningInvoice: "Factura Lightning",
  expiresIn: "Tiempo restante para pagar",
  expired: "Se acabó el tiempo",
  status: "Estado",
  statuses: {
    NR: "Esperando a que elijas una moneda",
    PE: "Esperando tu pago",
    AC: "Pago recibido, esperando confirmación",
    IA: "Importe recibido insuficiente",
    CO: "Pago completado",
    CA: "Pago cancelado",
    EX: "Pago caducado",
    OC: "Fuera de condiciones: el precio cambió antes de la confirmación",
    FA: "Pago fallido",
    DE: "Pago eliminado",
    CM: "Completado por el comercio",
  },
  redirecting: "Volviendo a la tienda…",
  backToShop: "Volver a la tienda",
  received: "Recibido",
  firstBlockSeen: "Primera confirmación de bloque recibida (safe): esperando a que la pasarela complete el pago.",
  sandboxControls: "Controles del sandbox",
  sandboxNote: "Solo simulación: la pasarela real no tiene estos botones.",
  actions: {
    pay_exact: "Pagar exacto",
    pay_less: "Pagar menos",
    pay_more: "Pagar más",
    confirm_once: "Solo el primer bloque (sigue en AC)",
    confirm: "Confirmar",
    fail: "Fallar",
    expire: "Dejar caducar ahora",
    complete_by_merchant: "Completar por el comercio",
    delete: "Eliminar",
  },
  notFound: "Este pago no existe.",
  rate: "Tipo de cambio",
};

export function pageTexts(lang: PageLanguage): PageTexts {
  return lang === "es" ? ES : EN;
}
