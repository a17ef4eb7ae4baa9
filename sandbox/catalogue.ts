// The sandbox's currency catalogue: one entry per (coin, network), with limits
// in EUR, the coin's precision, its expiry window, its simulated base price and
// the chain conventions used for addresses, memos and payment URIs.
export type ChainKind =
  | "bitcoin"
  | "lightning"
  | "litecoin"
  | "bitcoincash"
  | "dogecoin"
  | "ethereum"
  | "polygon"
  | "tron"
  | "solana"
  | "ripple"
  | "stellar"
  | "algorand";

export interface CurrencyDefinition {
  symbol: string;
  name: string;
  blockchain: string;
  /** Limits per payment, in EUR (converted into an order's fiat before comparing). */
  minAmountEur: string;
  maxAmountEur: string | null;
  /** Decimal places of the coin's amounts (expected_input_amount is rounded up to these). */
  decimals: number;
  /** Minutes a PE order waits for its payment before it expires (15-60). */
  windowMinutes: number;
  /** Simulated price of one coin in EUR, and the amplitude and period of its slow wave. */
  basePriceEur: string;
  waveAmplitude: string;
  wavePeriodHours: number;
  wavePhase: string;
  chain: ChainKind;
  /** The customer must send a destination tag or memo with the payment. */
  needsTagMemo: boolean;
  iconColor: string;
  iconLabel: string;
}

export const CURRENCIES: readonly CurrencyDefinition[] = [
  {
    symbol: "BTC", name: "Bitcoin BTC", blockchain: "BTC", minAmountEur: "0.05", maxAmountEur: "20000.00",
    decimals: 8, windowMinutes: 60, basePriceEur: "62000", waveAmplitude: "0.03", wavePeriodHours: 26, wavePhase: "0.3",
    chain: "bitcoin", needsTagMemo: false, iconColor: "#f7931a", iconLabel: "B",
  },
  {
    symbol: "BTCL", name: "Bitcoin Lightning BTC", blockchain: "BTC_LIGHTNING", minAmountEur: "0.01", maxAmountEur: "1000.00",
    decimals: 8, windowMinutes: 15, basePriceEur: "62000", waveAmplitude: "0.03", wavePeriodHours: 26, wavePhase: "0.3",
    chain: "lightning", needsTagMemo: false, iconColor: "#7b3fe4", iconLabel: "⚡",
  },
  {
    // 15 minutes: the recorded Ether order (test/fixtures/gateway/orders-info.response.eth_test.2022-10.Naza2021.json)
    // expired 15 minutes after its currency was fixed.
    symbol: "ETH", name: "Ethereum ETH", blockchain: "ETH", minAmountEur: "0.05", maxAmountEur: "20000.00",
    decimals: 8, windowMinutes: 15, basePriceEur: "3100", waveAmplitude: "0.04", wavePeriodHours: 19, wavePhase: "1.1",
    chain: "ethereum", needsTagMemo: false, iconColor: "#627eea", iconLabel: "Ξ",
  },
  {
    symbol: "USDC_ERC20", name: "USD Coin USDC", blockchain: "ETH", minAmountEur: "10.00", maxAmountEur: null,
    decimals: 6, windowMinutes: 30, basePriceEur: "0.926", waveAmplitude: "0.002", wavePeriodHours: 7, wavePhase: "0.0",
    chain: "ethereum", needsTagMemo: false, iconColor: "#2775ca", iconLabel: "$",
  },
  {
    symbol: "USDC_POLYGON", name: "USD Coin USDC", blockchain: "MATIC_POLYGON", minAmountEur: "1.00", maxAmountEur: null,
    decimals: 6, windowMinutes: 20, basePriceEur: "0.926", waveAmplitude: "0.002", wavePeriodHours: 7, wavePhase: "0.0",
    chain: "polygon", needsTagMemo: false, iconColor: "#8247e5", iconLabel: "$",
  },
  {
    symbol: "USDT_TRC20", name: "Tether USDT", blockchain: "TRX", minAmountEur: "1.00", maxAmountEur: "10000.00",
    decimals: 6, windowMinutes: 20, basePriceEur: "0.925", waveAmplitude: "0.002", wavePeriodHours: 5, wavePhase: "2.0",
    chain: "tron", needsTagMemo: false, iconColor: "#26a17b", iconLabel: "₮",
  },
  {
    symbol: "USDT_ERC20", name: "Tether USDT", blockchain: "ETH", minAmountEur: "10.00", maxAmountEur: null,
    decimals: 6, windowMinutes: 30, basePriceEur: "0.925", waveAmplitude: "0.002", wavePeriodHours: 5, wavePhase: "2.0",
    chain: "ethereum", needsTagMemo: false, iconColor: "#26a17b", iconLabel: "₮",
  },
  {
    symbol: "LTC", name: "Litecoin LTC", blockchain: "LTC", minAmountEur: "0.05", maxAmountEur: "20000.00",
    decimals: 8, windowMinutes: 45, basePriceEur: "78", waveAmplitude: "0.05", wavePeriodHours: 15, wavePhase: "0.7",
    chain: "litecoin", needsTagMemo: false, iconColor: "#345d9d", iconLabel: "Ł",
  },
  {
    symbol: "BCH", name: "Bitcoin Cash BCH", blockchain: "BCH", minAmountEur: "0.05", maxAmountEur: "20000.00",
    decimals: 8, windowMinutes: 45, basePriceEur: "420", waveAmplitude: "0.05", wavePeriodHours: 21, wavePhase: "2.4",
    chain: "bitcoincash", needsTagMemo: false, iconColor: "#8dc351", iconLabel: "Ƀ",
  },
  {
    symbol: "DOGE", name: "Dogecoin DOGE", blockchain: "DOGE", minAmountEur: "0.05", maxAmountEur: "5000.00",
    decimals: 8, windowMinutes: 20, basePriceEur: "0.14", waveAmplitude: "0.06", wavePeriodHours: 11, wavePhase: "4.0",
    chain: "dogecoin", needsTagMemo: false, iconColor: "#c2a633", iconLabel: "Ð",
  },
  {
    symbol: "SOL", name: "Solana SOL", blockchain: "SOL", minAmountEur: "0.05", maxAmountEur: "20000.00",
    decimals: 9, windowMinutes: 15, basePriceEur: "140", waveAmplitude: "0.05", wavePeriodHours: 9, wavePhase: "5.2",
    chain: "solana", needsTagMemo: false, iconColor: "#14f195", iconLabel: "◎",
  },
  {
    symbol: "XRP", name: "Ripple XRP", blockchain: "XRP", minAmountEur: "0.01", maxAmountEur: "20000.00",
    decimals: 6, windowMinutes: 15, basePriceEur: "0.52", waveAmplitude: "0.04", wavePeriodHours: 13, wavePhase: "3.3",
    chain: "ripple", needsTagMemo: true, iconColor: "#23292f", iconLabel: "✕",
  },
  {
    symbol: "XLM", name: "Stellar XLM", blockchain: "XLM", minAmountEur: "0.01", maxAmountEur: "10000.00",
    decimals: 7, windowMinutes: 15, basePriceEur: "0.11", waveAmplitude: "0.04", wavePeriodHours: 17, wavePhase: "1.9",
    chain: "stellar", needsTagMemo: true, iconColor: "#000000", iconLabel: "✦",
  },
  {
    symbol: "ALGO", name: "Algorand ALGO", blockchain: "ALGO", minAmountEur: "0.01", maxAmountEur: "10000.00",
    decimals: 6, windowMinutes: 15, basePriceEur: "0.17", waveAmplitude: "0.04", wavePeriodHours: 23, wavePhase: "0.9",
    chain: "algorand", needsTagMemo: true, iconColor: "#000000", iconLabel: "Ⱥ",
  },
];

const BY_SYMBOL = new Map(CURRENCIES.map((c) => [c.symbol, c]));

export function findCurrency(symbol: string): CurrencyDefinition | undefined {
  return BY_SYMBOL.get(symbol);
}

/** A symbol that matches ignoring letter case, to point out a wrong-case input_currency. */
export function findCurrencyIgnoringCase(symbol: string): CurrencyDefinition | undefined {
  const upper = symbol.toUpperCase();
  return CURRENCIES.find((c) => c.symbol.toUpperCase() === upper);
}

export function currencyIconSvg(def: CurrencyDefinition): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="36" height="36" viewBox="0 0 36 36" role="img" aria-label="${def.name}">` +
    `<circle cx="18" cy="18" r="17" fill="${def.iconColor}"/>` +
    `<text x="18" y="24" text-anchor="middle" font-family="sans-serif" font-size="17" font-weight="bold" fill="#fff">${def.iconLabel}</text>` +
    `</svg>`
  );
}
