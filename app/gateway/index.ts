// The gateway client's public surface: what the rest of the app may import.

export * from "./client";
export * from "./errors";
export { JsonNumber, parseGatewayJson, tryParseGatewayJson } from "./json-numbers";
export * from "./money";
export { COUNTRY_CODES, isCountryCode } from "./country-codes";
export { DEFAULT_FIAT, FIAT_CODES, isFiatCode } from "./fiat-codes";
export * from "./quota";
export * from "./retry";
export * from "./schemas";
export * from "./statuses";
export { classifyNetworkError, type FetchFunction } from "./transport";
export * from "./webhook-signature";
