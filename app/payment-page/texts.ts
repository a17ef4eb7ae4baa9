// Every text of the shopper's payment page, in each language it speaks. One object
// per language with the same keys, so a missing translation is a type error.
import type { PageLanguage } from "./language";

/** partial_expired: part of the amount arrived and the order's time ran out before the rest did. */
export type ShopperStatus = "choosing" | "waiting" | "partial" | "partial_expired" | "confirming" | "paid" | "expired" | "failed" | "review";
export type MemoKind = "destination_tag" | "memo" | "note";

export interface PageTexts {
  pageTitle: string;
  /**
   * The header's label for the payment's whole amount. Never "due": after a partial payment
   * only the rest is, and the page asks for it below, in the coin.
   */
  paymentAmount: string;
  payingAt: string;
  chooseCoin: string;
  chooseHelp: string;
  payWith: string;
  network: string;
  noCoins: string;
  scanQr: string;
  qrLabel: string;
  openInWallet: string;
  exactAmount: string;
  amountStillDue: string;
  sendTheRest: string;
  /** The status when partly paid and the rest due is not known yet: nothing is asked for. */
  restUnknown: string;
  address: string;
  sendOnly: string;
  memoLabels: Record<MemoKind, string>;
  memoWarning: string;
  memoMissing: string;
  lightningInvoice: string;
  lightningHelp: string;
  copy: string;
  copied: string;
  timeLeft: string;
  expiredShort: string;
  status: string;
  statuses: Record<ShopperStatus, string>;
  /** What to do when the time ran out with nothing received. */
  expiredHelp: string;
  /** What to do when the time ran out with part of the amount received. */
  partialExpiredHelp: string;
  /** What to do while the gateway reports a status the app does not know (the shop checks it). */
  reviewHelp: string;
  received: string;
  /** A label and what it labels ("{label}: {value}"; French puts a space before the colon). */
  labelled: string;
  redirecting: string;
  /** The note of the shopper's order at the gateway, which its page shows ("{shop}": the shop's domain). */
  orderNote: string;
  backToShop: string;
  confirmingReturn: string;
  payAnotherWay: string;
  continueOnGateway: string;
  /**
   * The order exists but the page has nothing to pay it with (a Lightning invoice the gateway
   * gave only in an answer that was lost): the shopper pays another way.
   */
  noPaymentDetails: string;
  errors: {
    unavailable: string;
    rejected: string;
    /** The gateway made the order for other terms than the payment's: no coin can take this payment. */
    cannotTakeCrypto: string;
    /** The gateway refused the coin for this amount; the page below offers the coins left, or says none is. */
    outOfLimits: string;
    /** The gateway's own reason for refusing the coin ({reason}, in the gateway's words). */
    gatewaySaid: string;
    closed: string;
    unknownCoin: string;
  };
  /** The return link's page while Shopify is being told about the payment. */
  waitingForShop: { title: string; heading: string; body: string };
  /**
   * The same page once the shopper has waited a couple of minutes (the gateway or Shopify cannot
   * be reached): it still checks, less often, and tells a shopper who paid not to pay again.
   */
  waitingLong: { title: string; heading: string; body: string };
  /**
   * The return link's page once Shopify refused to take a paid payment's outcome: no order
   * page will follow until the merchant sees to it, and the shopper must not pay again.
   */
  shopNotified: { title: string; heading: string; body: string };
  /**
   * The return link's pages that check again by themselves (waitingForShop, waitingLong,
   * shopNotified): that they do and how often ({seconds}), or that the shopper stopped it; a
   * link to check at once, and one to stop, or start again, the automatic checks.
   */
  checking: { every: string; paused: string; checkNow: string; stop: string; resume: string };
  /** The page for a link that leads to no payment (altered, cut short, or another payment's). */
  linkNotValid: { title: string; heading: string; body: string };
  /** The page when the payment page itself failed; it says nothing of why. */
  pageFailed: { title: string; heading: string; body: string };
  /**
   * The payment page and return link of a shop that uninstalled the app: its payments can no
   * longer reach the shop's orders, so nothing is to be sent, and whoever sent something asks the shop.
   */
  shopGone: { title: string; heading: string; body: string };
  /** The payment page when its connection to the shop failed while open: it tries again by itself. */
  connectionLost: { heading: string; body: string; tryAgain: string };
}

const en: PageTexts = {
  pageTitle: "Pay with crypto",
  paymentAmount: "Payment amount",
  payingAt: "Payment to",
  chooseCoin: "Choose a cryptocurrency",
  chooseHelp: "Pick the coin you want to pay with. The exact amount and the address appear next.",
  payWith: "Pay with",
  network: "network",
  noCoins: "No cryptocurrency can be used for this amount. Please choose another way to pay.",
  scanQr: "Scan the QR code with your wallet, or copy the details below.",
  qrLabel: "QR code of the payment request",
  openInWallet: "Open in a wallet app",
  exactAmount: "Exact amount to send",
  amountStillDue: "Amount still to send",
  sendTheRest: "Send only the amount still due, to the same address, before the time runs out.",
  restUnknown: "Part of the amount has arrived. The amount still due is not known yet, so nothing can be sent from this page for now. Please do not send the full amount again. This page updates on its own; if it does not, contact the shop.",
  address: "Address",
  sendOnly: "Send only {coin} on the {network} network to this address.",
  memoLabels: { destination_tag: "Destination tag", memo: "Memo", note: "Note" },
  memoWarning: "You must include this {label} in your payment. Without it your funds are lost and cannot be recovered.",
  memoMissing: "The payment details are incomplete. Do not send anything; choose another way to pay.",
  lightningInvoice: "Lightning invoice",
  lightningHelp: "Pay this invoice from a Lightning wallet. No address is needed.",
  copy: "Copy",
  copied: "Copied",
  timeLeft: "Time left to pay",
  expiredShort: "Expired",
  status: "Status",
  statuses: {
    choosing: "Waiting for you to choose a cryptocurrency.",
    waiting: "Waiting for your payment.",
    partial: "Part of the amount has arrived. Please send the rest.",
    partial_expired: "The time to pay ran out before the full amount arrived.",
    confirming: "Payment received. Waiting for the network to confirm it.",
    paid: "Payment confirmed. Thank you!",
    expired: "The time to pay has run out.",
    failed: "This payment could not be completed.",
    review: "This payment is being checked by the shop.",
  },
  expiredHelp: "Please do not send anything for this payment now. If you have just sent it, contact the shop.",
  partialExpiredHelp: "Please do not send anything more: this order can no longer be paid here. The shop sees what arrived and will contact you to refund it or to complete your order. You can also contact the shop yourself.",
  reviewHelp: "The payment service reported something this page cannot show, and the shop has been told. Please do not send anything now. If you already sent crypto for this order, do not pay again: the shop will confirm your order or contact you.",
  received: "Received",
  labelled: "{label}: {value}",
  redirecting: "Taking you back to the shop…",
  orderNote: "Order payment at {shop}",
  backToShop: "Return to the shop",
  confirmingReturn: "You can return to the shop now: your order is confirmed as soon as the network confirms the payment.",
  payAnotherWay: "I want to pay another way",
  continueOnGateway: "Continue to the payment page",
  noPaymentDetails: "The payment details for this cryptocurrency could not be retrieved, so nothing can be paid here. Please choose another way to pay.",
  errors: {
    unavailable: "The payment service cannot be reached right now. Please try again in a moment.",
    rejected: "This cryptocurrency cannot be used for this payment. Please choose another one.",
    cannotTakeCrypto: "This payment cannot be paid in crypto. Choose another payment method at the checkout: “I want to pay another way” below takes you back.",
    outOfLimits: "This cryptocurrency cannot be used for this amount.",
    gatewaySaid: "The payment service says: {reason}",
    closed: "This payment is no longer open.",
    unknownCoin: "Please choose one of the cryptocurrencies listed.",
  },
  waitingForShop: {
    title: "Confirming your payment",
    heading: "Confirming your payment…",
    body: "We are letting the shop know about your payment. Please keep this page open.",
  },
  waitingLong: {
    title: "Still confirming your payment",
    heading: "This is taking longer than usual",
    body: "We cannot confirm your payment with the shop yet. If you paid, do not pay again: the shop will confirm your order as soon as your payment is confirmed. You can keep this page open or close it.",
  },
  shopNotified: {
    title: "Payment received",
    heading: "Your payment was received",
    body: "The shop could not confirm your order automatically and has been notified: it will complete your order or contact you. Do not pay again. You can close this page.",
  },
  checking: {
    every: "This page checks again by itself every {seconds} seconds.",
    paused: "This page no longer checks by itself.",
    checkNow: "Check now",
    stop: "Stop automatic checks",
    resume: "Resume automatic checks",
  },
  linkNotValid: {
    title: "Payment link not valid",
    heading: "This payment link is not valid.",
    body: "It may be incomplete, or belong to another order. Go back to the shop's checkout and choose the payment method again to get a new link. If you already sent crypto for this order, do not pay again: contact the shop.",
  },
  pageFailed: {
    title: "Payment page unavailable",
    heading: "The payment page cannot be shown right now.",
    body: "Please reload this page in a moment.",
  },
  shopGone: {
    title: "Payment unavailable",
    heading: "This shop no longer takes crypto payments here.",
    body: "Do not send any crypto for this order. If you already sent some, contact the shop: it can confirm your order or refund you from its payment service.",
  },
  connectionLost: {
    heading: "The connection was lost.",
    body: "This page tries again every few seconds and carries on as soon as the connection is back. Your payment is not affected.",
    tryAgain: "Try again now",
  },
};

const es: PageTexts = {
  pageTitle: "Pagar con criptomonedas",
  paymentAmount: "Importe del pago",
  payingAt: "Pago a",
  chooseCoin: "Elige una criptomoneda",
  chooseHelp: "Elige la moneda con la que quieres pagar. A continuación verás el importe exacto y la dirección.",
  payWith: "Pagar con",
  network: "red",
  noCoins: "No hay ninguna criptomoneda disponible para este importe. Elige otra forma de pago.",
  scanQr: "Escanea el código QR con tu monedero o copia los datos de abajo.",
  qrLabel: "Código QR de la solicitud de pago",
  openInWallet: "Abrir en una app de monedero",
  exactAmount: "Importe exacto a enviar",
  amountStillDue: "Importe que falta por enviar",
  sendTheRest: "Envía solo el importe que falta, a la misma dirección, antes de que se acabe el tiempo.",
  restUnknown: "Ha llegado parte del importe. Todavía no se sabe cuánto falta, así que por ahora no se puede enviar nada desde esta página. No vuelvas a enviar el importe completo. Esta página se actualiza sola; si no lo hace, ponte en contacto con la tienda.",
  address: "Dirección",
  sendOnly: "Envía solo {coin} por la red {network} a esta dirección.",
  memoLabels: { destination_tag: "Etiqueta de destino", memo: "Memo", note: "Nota" },
  memoWarning: "Debes incluir el dato «{label}» en tu pago. Sin él tus fondos se pierden y no se pueden recuperar.",
  memoMissing: "Los datos del pago están incompletos. No envíes nada y elige otra forma de pago.",
  lightningInvoice: "Factura Lightning",
  lightningHelp: "Paga esta factura desde un monedero Lightning. No hace falta dirección.",
  copy: "Copiar",
  copied: "Copiado",
  timeLeft: "Tiempo para pagar",
  expiredShort: "Caducado",
  status: "Estado",
  statuses: {
    choosing: "Esperando a que elijas una criptomoneda.",
    waiting: "Esperando tu pago.",
    partial: "Ha llegado parte del importe. Envía el resto, por favor.",
    partial_expired: "Se agotó el tiempo para pagar antes de que llegara el importe completo.",
    confirming: "Pago recibido. Esperando la confirmación de la red.",
    paid: "Pago confirmado. ¡Gracias!",
    expired: "Se ha agotado el tiempo para pagar.",
    failed: "Este pago no se ha podido completar.",
    review: "La tienda está revisando este pago.",
  },
  expiredHelp: "No envíes nada para este pago ahora. Si acabas de enviarlo, ponte en contacto con la tienda.",
  partialExpiredHelp: "No envíes nada más: este pedido ya no se puede pagar aquí. La tienda ve lo que ha llegado y se pondrá en contacto contigo para devolvértelo o completar tu pedido. También puedes ponerte en contacto tú con la tienda.",
  reviewHelp: "El servicio de pago ha indicado algo que esta página no puede mostrar, y se ha avisado a la tienda. No envíes nada por ahora. Si ya enviaste criptomonedas para este pedido, no vuelvas a pagar: la tienda confirmará tu pedido o se pondrá en contacto contigo.",
  received: "Recibido",
  labelled: "{label}: {value}",
  redirecting: "Volviendo a la tienda…",
  orderNote: "Pago del pedido en {shop}",
  backToShop: "Volver a la tienda",
  confirmingReturn: "Ya puedes volver a la tienda: tu pedido se confirmará en cuanto la red confirme el pago.",
  payAnotherWay: "Quiero pagar de otra forma",
  continueOnGateway: "Continuar a la página de pago",
  noPaymentDetails: "No se han podido obtener los datos de pago de esta criptomoneda, así que aquí no se puede pagar. Elige otra forma de pago.",
  errors: {
    unavailable: "El servicio de pago no está disponible ahora mismo. Inténtalo de nuevo en un momento.",
    rejected: "Esta criptomoneda no se puede usar para este pago. Elige otra.",
    cannotTakeCrypto: "Este pago no se puede hacer con criptomonedas. Elige otra forma de pago en el checkout: «Quiero pagar de otra forma», abajo, te lleva de vuelta.",
    outOfLimits: "Esta criptomoneda no se puede usar para este importe.",
    gatewaySaid: "El servicio de pago indica: {reason}",
    closed: "Este pago ya no está abierto.",
    unknownCoin: "Elige una de las criptomonedas de la lista.",
  },
  waitingForShop: {
    title: "Confirmando tu pago",
    heading: "Confirmando tu pago…",
    body: "Estamos informando a la tienda de tu pago. No cierres esta página.",
  },
  waitingLong: {
    title: "Seguimos confirmando tu pago",
    heading: "Está tardando más de lo habitual",
    body: "Todavía no podemos confirmar tu pago con la tienda. Si has pagado, no vuelvas a pagar: la tienda confirmará tu pedido en cuanto se confirme tu pago. Puedes dejar esta página abierta o cerrarla.",
  },
  shopNotified: {
    title: "Pago recibido",
    heading: "Hemos recibido tu pago",
    body: "La tienda no ha podido confirmar tu pedido automáticamente y ya está avisada: completará tu pedido o se pondrá en contacto contigo. No vuelvas a pagar. Puedes cerrar esta página.",
  },
  checking: {
    every: "Esta página se actualiza sola cada {seconds} segundos.",
    paused: "Esta página ya no se actualiza sola.",
    checkNow: "Comprobar ahora",
    stop: "Detener la comprobación automática",
    resume: "Reanudar la comprobación automática",
  },
  linkNotValid: {
    title: "Enlace de pago no válido",
    heading: "Este enlace de pago no es válido.",
    body: "Puede que esté incompleto o que sea de otro pedido. Vuelve a la página de pago de la tienda y elige de nuevo la forma de pago para obtener un enlace nuevo. Si ya enviaste criptomonedas para este pedido, no vuelvas a pagar: contacta con la tienda.",
  },
  pageFailed: {
    title: "Página de pago no disponible",
    heading: "La página de pago no se puede mostrar en este momento.",
    body: "Vuelve a cargar esta página dentro de un momento.",
  },
  shopGone: {
    title: "Pago no disponible",
    heading: "Esta tienda ya no acepta pagos con criptomonedas aquí.",
    body: "No envíes criptomonedas para este pedido. Si ya enviaste, contacta con la tienda: puede confirmar tu pedido o reembolsarte desde su servicio de pago.",
  },
  connectionLost: {
    heading: "Se perdió la conexión.",
    body: "Esta página lo vuelve a intentar cada pocos segundos y sigue en cuanto vuelve la conexión. Tu pago no se ve afectado.",
    tryAgain: "Reintentar ahora",
  },
};

const pt: PageTexts = {
  pageTitle: "Pagar com criptomoedas",
  paymentAmount: "Valor do pagamento",
  payingAt: "Pagamento para",
  chooseCoin: "Escolha uma criptomoeda",
  chooseHelp: "Escolha a moeda com que quer pagar. Em seguida aparecem o valor exato e o endereço.",
  payWith: "Pagar com",
  network: "rede",
  noCoins: "Nenhuma criptomoeda pode ser usada para este valor. Escolha outra forma de pagamento.",
  scanQr: "Leia o código QR com a sua carteira ou copie os dados abaixo.",
  qrLabel: "Código QR do pedido de pagamento",
  openInWallet: "Abrir numa app de carteira",
  exactAmount: "Valor exato a enviar",
  amountStillDue: "Valor que falta enviar",
  sendTheRest: "Envie apenas o valor em falta, para o mesmo endereço, antes de o tempo terminar.",
  restUnknown: "Chegou parte do valor. Ainda não se sabe quanto falta, por isso, por agora, não é possível enviar nada a partir desta página. Não volte a enviar o valor completo. Esta página atualiza-se sozinha; se não o fizer, contacte a loja.",
  address: "Endereço",
  sendOnly: "Envie apenas {coin} na rede {network} para este endereço.",
  memoLabels: { destination_tag: "Tag de destino", memo: "Memo", note: "Nota" },
  memoWarning: "Tem de incluir o dado «{label}» no pagamento. Sem ele os seus fundos perdem-se e não podem ser recuperados.",
  memoMissing: "Os dados do pagamento estão incompletos. Não envie nada; escolha outra forma de pagamento.",
  lightningInvoice: "Fatura Lightning",
  lightningHelp: "Pague esta fatura a partir de uma carteira Lightning. Não é preciso endereço.",
  copy: "Copiar",
  copied: "Copiado",
  timeLeft: "Tempo para pagar",
  expiredShort: "Expirado",
  status: "Estado",
  statuses: {
    choosing: "À espera que escolha uma criptomoeda.",
    waiting: "À espera do seu pagamento.",
    partial: "Chegou parte do valor. Envie o restante, por favor.",
    partial_expired: "O tempo para pagar terminou antes de chegar o valor completo.",
    confirming: "Pagamento recebido. À espera da confirmação da rede.",
    paid: "Pagamento confirmado. Obrigado!",
    expired: "O tempo para pagar terminou.",
    failed: "Não foi possível concluir este pagamento.",
    review: "Este pagamento está a ser verificado pela loja.",
  },
  expiredHelp: "Não envie nada para este pagamento agora. Se acabou de o enviar, contacte a loja.",
  partialExpiredHelp: "Não envie mais nada: esta encomenda já não pode ser paga aqui. A loja vê o que chegou e vai contactá-lo para o devolver ou concluir a sua encomenda. Também pode contactar a loja.",
  reviewHelp: "O serviço de pagamento indicou algo que esta página não consegue mostrar, e a loja foi avisada. Não envie nada por agora. Se já enviou criptomoedas para esta encomenda, não pague novamente: a loja confirma a sua encomenda ou contacta-o.",
  received: "Recebido",
  labelled: "{label}: {value}",
  redirecting: "A voltar à loja…",
  orderNote: "Pagamento da encomenda em {shop}",
  backToShop: "Voltar à loja",
  confirmingReturn: "Já pode voltar à loja: a sua encomenda é confirmada assim que a rede confirmar o pagamento.",
  payAnotherWay: "Quero pagar de outra forma",
  continueOnGateway: "Continuar para a página de pagamento",
  noPaymentDetails: "Não foi possível obter os dados de pagamento desta criptomoeda, por isso não é possível pagar aqui. Escolha outra forma de pagamento.",
  errors: {
    unavailable: "O serviço de pagamento não está disponível neste momento. Tente novamente daqui a pouco.",
    rejected: "Esta criptomoeda não pode ser usada neste pagamento. Escolha outra.",
    cannotTakeCrypto: "Este pagamento não pode ser feito com criptomoeda. Escolha outra forma de pagamento no checkout: «Quero pagar de outra forma», abaixo, leva-o de volta.",
    outOfLimits: "Esta criptomoeda não pode ser usada para este valor.",
    gatewaySaid: "O serviço de pagamento indica: {reason}",
    closed: "Este pagamento já não está aberto.",
    unknownCoin: "Escolha uma das criptomoedas da lista.",
  },
  waitingForShop: {
    title: "A confirmar o seu pagamento",
    heading: "A confirmar o seu pagamento…",
    body: "Estamos a informar a loja sobre o seu pagamento. Mantenha esta página aberta.",
  },
  waitingLong: {
    title: "Ainda a confirmar o seu pagamento",
    heading: "Está a demorar mais do que o habitual",
    body: "Ainda não conseguimos confirmar o seu pagamento junto da loja. Se já pagou, não pague novamente: a loja confirmará a sua encomenda assim que o seu pagamento for confirmado. Pode manter esta página aberta ou fechá-la.",
  },
  shopNotified: {
    title: "Pagamento recebido",
    heading: "Recebemos o seu pagamento",
    body: "A loja não conseguiu confirmar a sua encomenda automaticamente e já foi avisada: vai concluir a sua encomenda ou contactá-lo. Não pague novamente. Pode fechar esta página.",
  },
  checking: {
    every: "Esta página atualiza-se sozinha a cada {seconds} segundos.",
    paused: "Esta página já não se atualiza sozinha.",
    checkNow: "Verificar agora",
    stop: "Parar a verificação automática",
    resume: "Retomar a verificação automática",
  },
  linkNotValid: {
    title: "Link de pagamento inválido",
    heading: "Este link de pagamento não é válido.",
    body: "Pode estar incompleto ou pertencer a outra encomenda. Volte à finalização da compra na loja e escolha de novo a forma de pagamento para obter um link novo. Se já enviou criptomoeda para esta encomenda, não pague de novo: contacte a loja.",
  },
  pageFailed: {
    title: "Página de pagamento indisponível",
    heading: "Não é possível mostrar a página de pagamento neste momento.",
    body: "Volte a carregar esta página daqui a um momento.",
  },
  shopGone: {
    title: "Pagamento indisponível",
    heading: "Esta loja já não aceita pagamentos em criptomoedas aqui.",
    body: "Não envie criptomoedas para esta encomenda. Se já enviou, contacte a loja: pode confirmar a sua encomenda ou reembolsá-lo a partir do seu serviço de pagamento.",
  },
  connectionLost: {
    heading: "A ligação perdeu-se.",
    body: "Esta página tenta de novo a cada poucos segundos e continua assim que a ligação voltar. O seu pagamento não é afetado.",
    tryAgain: "Tentar agora",
  },
};

/** Brazilian Portuguese: the shoppers of Brazil, where most Portuguese speakers are. */
const ptBR: PageTexts = {
  pageTitle: "Pagar com criptomoedas",
  paymentAmount: "Valor do pagamento",
  payingAt: "Pagamento para",
  chooseCoin: "Escolha uma criptomoeda",
  chooseHelp: "Escolha a moeda com que você quer pagar. Em seguida aparecem o valor exato e o endereço.",
  payWith: "Pagar com",
  network: "rede",
  noCoins: "Nenhuma criptomoeda pode ser usada para este valor. Escolha outra forma de pagamento.",
  scanQr: "Escaneie o QR code com a sua carteira ou copie os dados abaixo.",
  qrLabel: "QR code do pedido de pagamento",
  openInWallet: "Abrir em um app de carteira",
  exactAmount: "Valor exato a enviar",
  amountStillDue: "Valor que ainda falta enviar",
  sendTheRest: "Envie apenas o valor que falta, para o mesmo endereço, antes que o tempo acabe.",
  restUnknown: "Parte do valor chegou. Ainda não sabemos quanto falta, então por enquanto não é possível enviar nada por esta página. Não envie o valor completo de novo. Esta página se atualiza sozinha; se isso não acontecer, entre em contato com a loja.",
  address: "Endereço",
  sendOnly: "Envie apenas {coin} na rede {network} para este endereço.",
  memoLabels: { destination_tag: "Tag de destino", memo: "Memo", note: "Nota" },
  memoWarning: "Você precisa incluir o dado “{label}” no pagamento. Sem ele, seus fundos serão perdidos e não poderão ser recuperados.",
  memoMissing: "Os dados do pagamento estão incompletos. Não envie nada; escolha outra forma de pagamento.",
  lightningInvoice: "Fatura Lightning",
  lightningHelp: "Pague esta fatura com uma carteira Lightning. Não é preciso endereço.",
  copy: "Copiar",
  copied: "Copiado",
  timeLeft: "Tempo para pagar",
  expiredShort: "Expirado",
  status: "Situação",
  statuses: {
    choosing: "Aguardando você escolher uma criptomoeda.",
    waiting: "Aguardando o seu pagamento.",
    partial: "Parte do valor chegou. Por favor, envie o restante.",
    partial_expired: "O tempo para pagar acabou antes de o valor completo chegar.",
    confirming: "Pagamento recebido. Aguardando a confirmação da rede.",
    paid: "Pagamento confirmado. Obrigado!",
    expired: "O tempo para pagar acabou.",
    failed: "Não foi possível concluir este pagamento.",
    review: "Este pagamento está sendo verificado pela loja.",
  },
  expiredHelp: "Não envie nada para este pagamento agora. Se você acabou de enviar, entre em contato com a loja.",
  partialExpiredHelp: "Não envie mais nada: este pedido não pode mais ser pago aqui. A loja vê o que chegou e vai entrar em contato com você para devolver o valor ou concluir o seu pedido. Você também pode entrar em contato com a loja.",
  reviewHelp: "O serviço de pagamento informou algo que esta página não consegue mostrar, e a loja foi avisada. Não envie nada por enquanto. Se você já enviou criptomoedas para este pedido, não pague de novo: a loja vai confirmar o seu pedido ou entrar em contato com você.",
  received: "Recebido",
  labelled: "{label}: {value}",
  redirecting: "Voltando para a loja…",
  orderNote: "Pagamento do pedido em {shop}",
  backToShop: "Voltar para a loja",
  confirmingReturn: "Você já pode voltar para a loja: o seu pedido será confirmado assim que a rede confirmar o pagamento.",
  payAnotherWay: "Quero pagar de outra forma",
  continueOnGateway: "Continuar para a página de pagamento",
  noPaymentDetails: "Não foi possível obter os dados de pagamento desta criptomoeda, então não é possível pagar aqui. Escolha outra forma de pagamento.",
  errors: {
    unavailable: "O serviço de pagamento não está disponível no momento. Tente novamente daqui a pouco.",
    rejected: "Esta criptomoeda não pode ser usada neste pagamento. Escolha outra.",
    cannotTakeCrypto: "Este pagamento não pode ser feito com criptomoeda. Escolha outra forma de pagamento no checkout: “Quero pagar de outra forma”, abaixo, leva você de volta.",
    outOfLimits: "Esta criptomoeda não pode ser usada para este valor.",
    gatewaySaid: "O serviço de pagamento informa: {reason}",
    closed: "Este pagamento não está mais aberto.",
    unknownCoin: "Escolha uma das criptomoedas da lista.",
  },
  waitingForShop: {
    title: "Confirmando o seu pagamento",
    heading: "Confirmando o seu pagamento…",
    body: "Estamos informando a loja sobre o seu pagamento. Mantenha esta página aberta.",
  },
  waitingLong: {
    title: "Ainda confirmando seu pagamento",
    heading: "Está demorando mais do que o normal",
    body: "Ainda não conseguimos confirmar seu pagamento com a loja. Se você já pagou, não pague novamente: a loja vai confirmar seu pedido assim que seu pagamento for confirmado. Você pode manter esta página aberta ou fechá-la.",
  },
  shopNotified: {
    title: "Pagamento recebido",
    heading: "Recebemos o seu pagamento",
    body: "A loja não conseguiu confirmar o seu pedido automaticamente e já foi avisada: ela vai concluir o seu pedido ou entrar em contato com você. Não pague de novo. Você pode fechar esta página.",
  },
  checking: {
    every: "Esta página se atualiza sozinha a cada {seconds} segundos.",
    paused: "Esta página não se atualiza mais sozinha.",
    checkNow: "Verificar agora",
    stop: "Parar a verificação automática",
    resume: "Retomar a verificação automática",
  },
  linkNotValid: {
    title: "Link de pagamento inválido",
    heading: "Este link de pagamento não é válido.",
    body: "Ele pode estar incompleto ou ser de outro pedido. Volte ao checkout da loja e escolha de novo a forma de pagamento para receber um link novo. Se você já enviou criptomoeda para este pedido, não pague de novo: fale com a loja.",
  },
  pageFailed: {
    title: "Página de pagamento indisponível",
    heading: "Não é possível mostrar a página de pagamento no momento.",
    body: "Recarregue esta página daqui a pouco.",
  },
  shopGone: {
    title: "Pagamento indisponível",
    heading: "Esta loja não aceita mais pagamentos em criptomoedas aqui.",
    body: "Não envie criptomoedas para este pedido. Se você já enviou, entre em contato com a loja: ela pode confirmar seu pedido ou reembolsar você pelo serviço de pagamento dela.",
  },
  connectionLost: {
    heading: "A conexão caiu.",
    body: "Esta página tenta de novo a cada poucos segundos e continua assim que a conexão voltar. Seu pagamento não é afetado.",
    tryAgain: "Tentar agora",
  },
};

const it: PageTexts = {
  pageTitle: "Paga con criptovalute",
  paymentAmount: "Importo del pagamento",
  payingAt: "Pagamento a",
  chooseCoin: "Scegli una criptovaluta",
  chooseHelp: "Scegli la moneta con cui vuoi pagare. Subito dopo vedrai l'importo esatto e l'indirizzo.",
  payWith: "Paga con",
  network: "rete",
  noCoins: "Nessuna criptovaluta è disponibile per questo importo. Scegli un altro metodo di pagamento.",
  scanQr: "Scansiona il codice QR con il tuo wallet oppure copia i dati qui sotto.",
  qrLabel: "Codice QR della richiesta di pagamento",
  openInWallet: "Apri in un'app wallet",
  exactAmount: "Importo esatto da inviare",
  amountStillDue: "Importo ancora da inviare",
  sendTheRest: "Invia solo l'importo mancante, allo stesso indirizzo, prima che scada il tempo.",
  restUnknown: "È arrivata una parte dell'importo. Non si sa ancora quanto manca, quindi per ora non si può inviare nulla da questa pagina. Non inviare di nuovo l'importo completo. Questa pagina si aggiorna da sola; se non succede, contatta il negozio.",
  address: "Indirizzo",
  sendOnly: "Invia solo {coin} sulla rete {network} a questo indirizzo.",
  memoLabels: { destination_tag: "Tag di destinazione", memo: "Memo", note: "Nota" },
  memoWarning: "Devi includere il dato «{label}» nel pagamento. Senza, i tuoi fondi vanno persi e non si possono recuperare.",
  memoMissing: "I dati del pagamento sono incompleti. Non inviare nulla e scegli un altro metodo di pagamento.",
  lightningInvoice: "Fattura Lightning",
  lightningHelp: "Paga questa fattura da un wallet Lightning. Non serve un indirizzo.",
  copy: "Copia",
  copied: "Copiato",
  timeLeft: "Tempo rimasto per pagare",
  expiredShort: "Scaduto",
  status: "Stato",
  statuses: {
    choosing: "In attesa che tu scelga una criptovaluta.",
    waiting: "In attesa del tuo pagamento.",
    partial: "È arrivata una parte dell'importo. Invia il resto, per favore.",
    partial_expired: "Il tempo per pagare è scaduto prima che arrivasse l'importo completo.",
    confirming: "Pagamento ricevuto. In attesa della conferma della rete.",
    paid: "Pagamento confermato. Grazie!",
    expired: "Il tempo per pagare è scaduto.",
    failed: "Non è stato possibile completare questo pagamento.",
    review: "Il negozio sta verificando questo pagamento.",
  },
  expiredHelp: "Non inviare nulla per questo pagamento ora. Se l'hai appena inviato, contatta il negozio.",
  partialExpiredHelp: "Non inviare altro: questo ordine non può più essere pagato qui. Il negozio vede quanto è arrivato e ti contatterà per rimborsarlo o completare il tuo ordine. Puoi anche contattare tu il negozio.",
  reviewHelp: "Il servizio di pagamento ha segnalato qualcosa che questa pagina non può mostrare, e il negozio è stato avvisato. Per ora non inviare nulla. Se hai già inviato criptovalute per questo ordine, non pagare di nuovo: il negozio confermerà il tuo ordine o ti contatterà.",
  received: "Ricevuto",
  labelled: "{label}: {value}",
  redirecting: "Ti riportiamo al negozio…",
  orderNote: "Pagamento dell'ordine su {shop}",
  backToShop: "Torna al negozio",
  confirmingReturn: "Puoi tornare al negozio: il tuo ordine viene confermato appena la rete conferma il pagamento.",
  payAnotherWay: "Voglio pagare in un altro modo",
  continueOnGateway: "Continua alla pagina di pagamento",
  noPaymentDetails: "Non è stato possibile ottenere i dati di pagamento di questa criptovaluta, quindi qui non si può pagare. Scegli un altro metodo di pagamento.",
  errors: {
    unavailable: "Il servizio di pagamento non è raggiungibile in questo momento. Riprova tra poco.",
    rejected: "Questa criptovaluta non può essere usata per questo pagamento. Scegline un'altra.",
    cannotTakeCrypto: "Questo pagamento non può essere fatto in criptovaluta. Scegli un altro metodo di pagamento al checkout: «Voglio pagare in un altro modo», qui sotto, ti riporta indietro.",
    outOfLimits: "Questa criptovaluta non può essere usata per questo importo.",
    gatewaySaid: "Il servizio di pagamento indica: {reason}",
    closed: "Questo pagamento non è più aperto.",
    unknownCoin: "Scegli una delle criptovalute elencate.",
  },
  waitingForShop: {
    title: "Conferma del pagamento in corso",
    heading: "Conferma del pagamento in corso…",
    body: "Stiamo informando il negozio del tuo pagamento. Tieni aperta questa pagina.",
  },
  waitingLong: {
    title: "Stiamo ancora confermando il pagamento",
    heading: "Ci vuole più tempo del solito",
    body: "Non riusciamo ancora a confermare il tuo pagamento con il negozio. Se hai pagato, non pagare di nuovo: il negozio confermerà il tuo ordine appena il pagamento sarà confermato. Puoi tenere aperta questa pagina o chiuderla.",
  },
  shopNotified: {
    title: "Pagamento ricevuto",
    heading: "Abbiamo ricevuto il tuo pagamento",
    body: "Il negozio non è riuscito a confermare il tuo ordine automaticamente ed è stato avvisato: completerà l'ordine o ti contatterà. Non pagare di nuovo. Puoi chiudere questa pagina.",
  },
  checking: {
    every: "Questa pagina si aggiorna da sola ogni {seconds} secondi.",
    paused: "Questa pagina non si aggiorna più da sola.",
    checkNow: "Controlla ora",
    stop: "Interrompi il controllo automatico",
    resume: "Riprendi il controllo automatico",
  },
  linkNotValid: {
    title: "Link di pagamento non valido",
    heading: "Questo link di pagamento non è valido.",
    body: "Potrebbe essere incompleto o appartenere a un altro ordine. Torna al checkout del negozio e scegli di nuovo il metodo di pagamento per ricevere un nuovo link. Se hai già inviato criptovaluta per questo ordine, non pagare di nuovo: contatta il negozio.",
  },
  pageFailed: {
    title: "Pagina di pagamento non disponibile",
    heading: "Al momento la pagina di pagamento non può essere mostrata.",
    body: "Ricarica questa pagina tra qualche istante.",
  },
  shopGone: {
    title: "Pagamento non disponibile",
    heading: "Questo negozio non accetta più pagamenti in criptovalute qui.",
    body: "Non inviare criptovalute per questo ordine. Se le hai già inviate, contatta il negozio: può confermare il tuo ordine o rimborsarti dal suo servizio di pagamento.",
  },
  connectionLost: {
    heading: "La connessione si è interrotta.",
    body: "Questa pagina riprova ogni pochi secondi e prosegue appena torna la connessione. Il tuo pagamento non ne risente.",
    tryAgain: "Riprova ora",
  },
};

const fr: PageTexts = {
  pageTitle: "Payer en cryptomonnaie",
  paymentAmount: "Montant du paiement",
  payingAt: "Paiement à",
  chooseCoin: "Choisissez une cryptomonnaie",
  chooseHelp: "Choisissez la monnaie avec laquelle vous voulez payer. Le montant exact et l'adresse s'affichent ensuite.",
  payWith: "Payer avec",
  network: "réseau",
  noCoins: "Aucune cryptomonnaie n'est disponible pour ce montant. Choisissez un autre moyen de paiement.",
  scanQr: "Scannez le code QR avec votre portefeuille ou copiez les informations ci-dessous.",
  qrLabel: "Code QR de la demande de paiement",
  openInWallet: "Ouvrir dans une application de portefeuille",
  exactAmount: "Montant exact à envoyer",
  amountStillDue: "Montant restant à envoyer",
  sendTheRest: "Envoyez uniquement le montant restant, à la même adresse, avant la fin du délai.",
  restUnknown: "Une partie du montant est arrivée. Le montant restant n’est pas encore connu : rien ne peut être envoyé depuis cette page pour le moment. N’envoyez pas à nouveau le montant complet. Cette page se met à jour d’elle-même ; sinon, contactez la boutique.",
  address: "Adresse",
  sendOnly: "Envoyez uniquement des {coin} sur le réseau {network} à cette adresse.",
  memoLabels: { destination_tag: "Tag de destination", memo: "Mémo", note: "Note" },
  memoWarning: "Vous devez inclure l'information « {label} » dans votre paiement. Sans elle, vos fonds sont perdus et ne peuvent pas être récupérés.",
  memoMissing: "Les informations de paiement sont incomplètes. N'envoyez rien et choisissez un autre moyen de paiement.",
  lightningInvoice: "Facture Lightning",
  lightningHelp: "Payez cette facture depuis un portefeuille Lightning. Aucune adresse n'est nécessaire.",
  copy: "Copier",
  copied: "Copié",
  timeLeft: "Temps restant pour payer",
  expiredShort: "Expiré",
  status: "État",
  statuses: {
    choosing: "En attente de votre choix de cryptomonnaie.",
    waiting: "En attente de votre paiement.",
    partial: "Une partie du montant est arrivée. Merci d'envoyer le reste.",
    partial_expired: "Le délai de paiement s'est écoulé avant que le montant complet n'arrive.",
    confirming: "Paiement reçu. En attente de la confirmation du réseau.",
    paid: "Paiement confirmé. Merci !",
    expired: "Le délai de paiement est écoulé.",
    failed: "Ce paiement n'a pas pu aboutir.",
    review: "Ce paiement est en cours de vérification par la boutique.",
  },
  expiredHelp: "N'envoyez rien pour ce paiement maintenant. Si vous venez de l'envoyer, contactez la boutique.",
  partialExpiredHelp: "N'envoyez plus rien : cette commande ne peut plus être payée ici. La boutique voit ce qui est arrivé et vous contactera pour vous le rembourser ou finaliser votre commande. Vous pouvez aussi contacter la boutique vous-même.",
  reviewHelp: "Le service de paiement a signalé quelque chose que cette page ne peut pas afficher, et la boutique a été prévenue. N'envoyez rien pour le moment. Si vous avez déjà envoyé des cryptomonnaies pour cette commande, ne payez pas une seconde fois : la boutique confirmera votre commande ou vous contactera.",
  received: "Reçu",
  labelled: "{label} : {value}",
  redirecting: "Retour à la boutique…",
  orderNote: "Paiement de la commande sur {shop}",
  backToShop: "Retour à la boutique",
  confirmingReturn: "Vous pouvez revenir à la boutique : votre commande est confirmée dès que le réseau confirme le paiement.",
  payAnotherWay: "Je veux payer autrement",
  continueOnGateway: "Continuer vers la page de paiement",
  noPaymentDetails: "Les informations de paiement de cette cryptomonnaie n’ont pas pu être obtenues : aucun paiement n’est possible ici. Veuillez choisir un autre moyen de paiement.",
  errors: {
    unavailable: "Le service de paiement est injoignable pour le moment. Réessayez dans un instant.",
    rejected: "Cette cryptomonnaie ne peut pas être utilisée pour ce paiement. Choisissez-en une autre.",
    cannotTakeCrypto: "Ce paiement ne peut pas être réglé en cryptomonnaie. Choisissez un autre moyen de paiement au checkout : « Je veux payer autrement », ci-dessous, vous y ramène.",
    outOfLimits: "Cette cryptomonnaie ne peut pas être utilisée pour ce montant.",
    gatewaySaid: "Le service de paiement indique : {reason}",
    closed: "Ce paiement n'est plus ouvert.",
    unknownCoin: "Choisissez l'une des cryptomonnaies de la liste.",
  },
  waitingForShop: {
    title: "Confirmation de votre paiement",
    heading: "Confirmation de votre paiement…",
    body: "Nous informons la boutique de votre paiement. Gardez cette page ouverte.",
  },
  waitingLong: {
    title: "Confirmation de votre paiement en cours",
    heading: "Cela prend plus de temps que d’habitude",
    body: "Nous ne pouvons pas encore confirmer votre paiement auprès de la boutique. Si vous avez payé, ne payez pas une seconde fois : la boutique confirmera votre commande dès que votre paiement sera confirmé. Vous pouvez garder cette page ouverte ou la fermer.",
  },
  shopNotified: {
    title: "Paiement reçu",
    heading: "Votre paiement a bien été reçu",
    body: "La boutique n'a pas pu confirmer votre commande automatiquement et a été prévenue : elle finalisera votre commande ou vous contactera. Ne payez pas une seconde fois. Vous pouvez fermer cette page.",
  },
  checking: {
    every: "Cette page s'actualise toute seule toutes les {seconds} secondes.",
    paused: "Cette page ne s'actualise plus toute seule.",
    checkNow: "Vérifier maintenant",
    stop: "Arrêter la vérification automatique",
    resume: "Reprendre la vérification automatique",
  },
  linkNotValid: {
    title: "Lien de paiement non valide",
    heading: "Ce lien de paiement n'est pas valide.",
    body: "Il est peut-être incomplet ou correspond à une autre commande. Revenez au paiement de la boutique et choisissez à nouveau le moyen de paiement pour obtenir un nouveau lien. Si vous avez déjà envoyé de la cryptomonnaie pour cette commande, ne payez pas une seconde fois : contactez la boutique.",
  },
  pageFailed: {
    title: "Page de paiement indisponible",
    heading: "La page de paiement ne peut pas s'afficher pour le moment.",
    body: "Rechargez cette page dans un instant.",
  },
  shopGone: {
    title: "Paiement indisponible",
    heading: "Cette boutique n'accepte plus les paiements en cryptomonnaies ici.",
    body: "N'envoyez pas de cryptomonnaies pour cette commande. Si vous en avez déjà envoyé, contactez la boutique : elle peut confirmer votre commande ou vous rembourser depuis son service de paiement.",
  },
  connectionLost: {
    heading: "La connexion a été perdue.",
    body: "Cette page réessaie toutes les quelques secondes et reprend dès que la connexion revient. Votre paiement n'est pas concerné.",
    tryAgain: "Réessayer maintenant",
  },
};

const de: PageTexts = {
  pageTitle: "Mit Kryptowährung bezahlen",
  paymentAmount: "Zahlungsbetrag",
  payingAt: "Zahlung an",
  chooseCoin: "Kryptowährung wählen",
  chooseHelp: "Wählen Sie die Währung, mit der Sie bezahlen möchten. Danach sehen Sie den genauen Betrag und die Adresse.",
  payWith: "Bezahlen mit",
  network: "Netzwerk",
  noCoins: "Für diesen Betrag ist keine Kryptowährung verfügbar. Bitte wählen Sie eine andere Zahlungsart.",
  scanQr: "Scannen Sie den QR-Code mit Ihrer Wallet oder kopieren Sie die Angaben unten.",
  qrLabel: "QR-Code der Zahlungsanforderung",
  openInWallet: "In einer Wallet-App öffnen",
  exactAmount: "Genauer Betrag zum Senden",
  amountStillDue: "Noch zu sendender Betrag",
  sendTheRest: "Senden Sie nur den noch offenen Betrag an dieselbe Adresse, bevor die Zeit abläuft.",
  restUnknown: "Ein Teil des Betrags ist eingegangen. Der noch offene Betrag ist noch nicht bekannt, daher kann über diese Seite im Moment nichts gesendet werden. Bitte senden Sie nicht erneut den vollen Betrag. Diese Seite aktualisiert sich von selbst; falls nicht, wenden Sie sich an den Shop.",
  address: "Adresse",
  sendOnly: "Senden Sie nur {coin} über das {network}-Netzwerk an diese Adresse.",
  memoLabels: { destination_tag: "Destination Tag", memo: "Memo", note: "Notiz" },
  memoWarning: "Sie müssen die Angabe „{label}“ in Ihre Zahlung übernehmen. Ohne sie geht Ihr Geld verloren und kann nicht zurückgeholt werden.",
  memoMissing: "Die Zahlungsdaten sind unvollständig. Senden Sie nichts und wählen Sie eine andere Zahlungsart.",
  lightningInvoice: "Lightning-Rechnung",
  lightningHelp: "Bezahlen Sie diese Rechnung mit einer Lightning-Wallet. Eine Adresse ist nicht nötig.",
  copy: "Kopieren",
  copied: "Kopiert",
  timeLeft: "Verbleibende Zeit",
  expiredShort: "Abgelaufen",
  status: "Status",
  statuses: {
    choosing: "Warten auf Ihre Wahl der Kryptowährung.",
    waiting: "Warten auf Ihre Zahlung.",
    partial: "Ein Teil des Betrags ist eingegangen. Bitte senden Sie den Rest.",
    partial_expired: "Die Zeit zum Bezahlen ist abgelaufen, bevor der volle Betrag eingegangen ist.",
    confirming: "Zahlung erhalten. Warten auf die Bestätigung durch das Netzwerk.",
    paid: "Zahlung bestätigt. Vielen Dank!",
    expired: "Die Zeit zum Bezahlen ist abgelaufen.",
    failed: "Diese Zahlung konnte nicht abgeschlossen werden.",
    review: "Der Shop prüft diese Zahlung.",
  },
  expiredHelp: "Bitte senden Sie jetzt nichts für diese Zahlung. Falls Sie sie gerade gesendet haben, wenden Sie sich an den Shop.",
  partialExpiredHelp: "Bitte senden Sie nichts mehr: Diese Bestellung kann hier nicht mehr bezahlt werden. Der Shop sieht, was eingegangen ist, und meldet sich bei Ihnen, um es zu erstatten oder Ihre Bestellung abzuschließen. Sie können sich auch selbst an den Shop wenden.",
  reviewHelp: "Der Zahlungsdienst hat etwas gemeldet, das diese Seite nicht anzeigen kann, und der Shop wurde benachrichtigt. Bitte senden Sie vorerst nichts. Wenn Sie für diese Bestellung bereits Kryptowährung gesendet haben, zahlen Sie nicht erneut: Der Shop bestätigt Ihre Bestellung oder meldet sich bei Ihnen.",
  received: "Erhalten",
  labelled: "{label}: {value}",
  redirecting: "Sie werden zum Shop zurückgeleitet…",
  orderNote: "Bezahlung der Bestellung bei {shop}",
  backToShop: "Zurück zum Shop",
  confirmingReturn: "Sie können jetzt zum Shop zurückkehren: Ihre Bestellung wird bestätigt, sobald das Netzwerk die Zahlung bestätigt.",
  payAnotherWay: "Ich möchte anders bezahlen",
  continueOnGateway: "Weiter zur Zahlungsseite",
  noPaymentDetails: "Die Zahlungsdaten für diese Kryptowährung konnten nicht abgerufen werden, daher ist hier keine Zahlung möglich. Bitte wählen Sie eine andere Zahlungsart.",
  errors: {
    unavailable: "Der Zahlungsdienst ist gerade nicht erreichbar. Bitte versuchen Sie es gleich noch einmal.",
    rejected: "Diese Kryptowährung kann für diese Zahlung nicht verwendet werden. Bitte wählen Sie eine andere.",
    cannotTakeCrypto: "Diese Zahlung kann nicht mit Kryptowährung bezahlt werden. Wählen Sie im Checkout eine andere Zahlungsart: „Ich möchte anders bezahlen“ unten bringt Sie dorthin zurück.",
    outOfLimits: "Diese Kryptowährung kann für diesen Betrag nicht verwendet werden.",
    gatewaySaid: "Der Zahlungsdienst meldet: {reason}",
    closed: "Diese Zahlung ist nicht mehr offen.",
    unknownCoin: "Bitte wählen Sie eine der aufgeführten Kryptowährungen.",
  },
  waitingForShop: {
    title: "Ihre Zahlung wird bestätigt",
    heading: "Ihre Zahlung wird bestätigt…",
    body: "Wir informieren den Shop über Ihre Zahlung. Bitte lassen Sie diese Seite geöffnet.",
  },
  waitingLong: {
    title: "Ihre Zahlung wird noch bestätigt",
    heading: "Das dauert länger als üblich",
    body: "Wir können Ihre Zahlung noch nicht beim Shop bestätigen. Wenn Sie bezahlt haben, zahlen Sie nicht erneut: Der Shop bestätigt Ihre Bestellung, sobald Ihre Zahlung bestätigt ist. Sie können diese Seite geöffnet lassen oder schließen.",
  },
  shopNotified: {
    title: "Zahlung erhalten",
    heading: "Ihre Zahlung ist eingegangen",
    body: "Der Shop konnte Ihre Bestellung nicht automatisch bestätigen und wurde benachrichtigt: Er schließt Ihre Bestellung ab oder meldet sich bei Ihnen. Bitte zahlen Sie nicht erneut. Sie können diese Seite schließen.",
  },
  checking: {
    every: "Diese Seite aktualisiert sich alle {seconds} Sekunden von selbst.",
    paused: "Diese Seite aktualisiert sich nicht mehr von selbst.",
    checkNow: "Jetzt prüfen",
    stop: "Automatische Prüfung beenden",
    resume: "Automatische Prüfung fortsetzen",
  },
  linkNotValid: {
    title: "Ungültiger Zahlungslink",
    heading: "Dieser Zahlungslink ist nicht gültig.",
    body: "Er ist vielleicht unvollständig oder gehört zu einer anderen Bestellung. Kehren Sie zum Checkout des Shops zurück und wählen Sie die Zahlungsart erneut, um einen neuen Link zu erhalten. Wenn Sie für diese Bestellung bereits Kryptowährung gesendet haben, zahlen Sie nicht erneut: Wenden Sie sich an den Shop.",
  },
  pageFailed: {
    title: "Zahlungsseite nicht verfügbar",
    heading: "Die Zahlungsseite kann gerade nicht angezeigt werden.",
    body: "Bitte laden Sie diese Seite in einem Moment neu.",
  },
  shopGone: {
    title: "Zahlung nicht verfügbar",
    heading: "Dieser Shop nimmt hier keine Kryptozahlungen mehr an.",
    body: "Senden Sie für diese Bestellung keine Kryptowährung. Falls Sie bereits etwas gesendet haben, wenden Sie sich an den Shop: Er kann Ihre Bestellung bestätigen oder Ihnen den Betrag über seinen Zahlungsdienst erstatten.",
  },
  connectionLost: {
    heading: "Die Verbindung wurde unterbrochen.",
    body: "Diese Seite versucht es alle paar Sekunden erneut und macht weiter, sobald die Verbindung wieder steht. Ihre Zahlung ist davon nicht betroffen.",
    tryAgain: "Jetzt erneut versuchen",
  },
};

export const PAGE_TEXTS: Record<PageLanguage, PageTexts> = { en, es, pt, "pt-BR": ptBR, it, fr, de };

export function pageTexts(language: PageLanguage): PageTexts {
  return PAGE_TEXTS[language];
}

/** Fills "{name}" placeholders. */
export function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);
}
