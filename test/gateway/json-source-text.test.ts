// The gateway's amounts are JSON numbers, read exactly through JSON.parse's source text (Node 22).
// On a runtime whose JSON.parse gives the reviver no source text (Node 20), a number could only be
// read through a float: "0.12345678901234567891" would become "0.12345678901234568", with nothing
// said. Such a runtime is refused loudly instead, on every read, never taken for a malformed body.
import { afterEach, expect, it, vi } from "vitest";
import { InexactJsonRuntimeError, JsonNumber, parseGatewayJson, tryParseGatewayJson } from "../../app/gateway/json-numbers";

const AMOUNTS = '{"crypto_amount": 0.12345678901234567891, "percentage": 100.0}';

afterEach(() => vi.restoreAllMocks());

it("reads a number's own text on this runtime", () => {
  expect(parseGatewayJson(AMOUNTS)).toStrictEqual({ crypto_amount: new JsonNumber("0.12345678901234567891"), percentage: new JsonNumber("100.0") });
});

it("refuses a runtime whose JSON.parse gives no source text, also where a malformed body would be answered as such", () => {
  const parse = JSON.parse.bind(JSON);
  // JSON.parse as Node 20 runs it: the reviver gets the key and the value, no context.
  vi.spyOn(JSON, "parse").mockImplementation((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) =>
    parse(text, reviver ? function (this: unknown, key: string, value: unknown) { return reviver.call(this, key, value); } : undefined),
  );
  expect(() => parseGatewayJson(AMOUNTS)).toThrow(InexactJsonRuntimeError);
  expect(() => tryParseGatewayJson(AMOUNTS)).toThrow(InexactJsonRuntimeError);
  // Text without a number is read as before; a malformed one is still only malformed.
  expect(tryParseGatewayJson('{"status": "CO"}')).toEqual({ ok: true, value: { status: "CO" } });
  expect(tryParseGatewayJson('{"status": ')).toEqual({ ok: false });
});
