// The headers every shopper's page is served with (server/page-headers.ts), as a response
// spells them: never cached, framed or sent on in a Referer.
export const SHOPPER_HEADERS = {
  "cache-control": "no-store",
  "referrer-policy": "same-origin",
  "content-security-policy": "frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
};
