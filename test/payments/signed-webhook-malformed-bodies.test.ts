// Gateway webhooks validly signed with the shop's Secret Key, so that they pass the signature
// and reach the payload's parsing: whatever the body is (random text, random JSON, random bytes,
// a payload with bytes that are not UTF-8), the answer is a 200 or a 4xx with a reason, never a
// 5xx that every redelivery would repeat; and a refused one stores nothing.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { signWebhook } from "../../app/gateway/webhook-signature";
import { credentialContext } from "../../app/shops/shop-credentials.server";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false });
const db = () => stack().services.db;
beforeAll(() => stack().logger.info("signed malformed webhook bodies: started"));

async function postSigned(body: Uint8Array): Promise<{ status: number; text: string }> {
  const shop = await db().shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
  const secretHex = stack().services.cipher.decrypt(shop.sandboxSecretKeyEnc!, credentialContext(shop.id, "sandbox", "secret-key"));
  const nonce = String(Math.floor(Date.now() / 1000));
  const response = await fetch(`${stack().app.url}/gateway/webhooks/${shop.webhookToken}`, {
    method: "POST",
    body: new Uint8Array(body),
    headers: { "content-type": "application/json", "x-nonce": nonce, "x-signature": signWebhook({ secretHex, nonce, rawBody: body }) },
  });
  return { status: response.status, text: await response.text() };
}

const stored = () => db().gatewayWebhook.count();

async function expectNoServerError(body: Uint8Array, what: string) {
  const before = await stored();
  const answer = await postSigned(body);
  expect(answer.status, `${what} answered ${answer.status}: ${answer.text.slice(0, 200)}`).toBeLessThan(500);
  if (answer.status !== 200) {
    expect(answer.status, what).toBeGreaterThanOrEqual(400);
    expect((JSON.parse(answer.text) as { error?: string }).error, what).toBeTruthy();
    expect(await stored(), `${what} was stored though refused`).toBe(before);
  } else {
    expect(await stored()).toBe(before + 1);
  }
}

const utf8 = (text: string) => new TextEncoder().encode(text);

describe("validly signed gateway webhooks with malformed bodies", () => {
  it("random text, JSON and bytes get a 200 or a 4xx with a reason, and a refused one stores nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 200 }).map(utf8),
          fc.jsonValue({ maxDepth: 3 }).map((value) => utf8(JSON.stringify(value))),
          fc.record({ identifier: fc.oneof(fc.uuid(), fc.string()), status: fc.oneof(fc.constantFrom("CO", "EX", "PE"), fc.jsonValue()), fiat_amount: fc.jsonValue() }, { requiredKeys: [] }).map((value) => utf8(JSON.stringify(value))),
          fc.uint8Array({ maxLength: 200 }),
        ),
        async (body) => expectNoServerError(body, Buffer.from(body).toString("base64")),
      ),
      { numRuns: 60 },
    );
  });

  it("a payload with bytes that are not UTF-8 in a text field is not answered with a 5xx", async () => {
    const head = utf8(`{"identifier": "${randomUUID()}", "status": "CO", "fiat_amount": 25.5, "reference": "`);
    const tail = utf8(`"}`);
    for (const bad of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xfe, 0xfe]]) {
      await expectNoServerError(new Uint8Array([...head, ...bad, ...tail]), `bytes ${bad.join(",")}`);
    }
  });

  it("a body that is not JSON, or JSON without an identifier, is refused 400 malformed_payload and not stored", async () => {
    for (const body of ["not json", "{", "[]", "null", `{"status": "CO"}`, `{"identifier": "not-a-uuid", "status": "CO"}`]) {
      const before = await stored();
      const answer = await postSigned(utf8(body));
      expect(answer.status, body).toBe(400);
      expect(answer.text, body).toContain("malformed_payload");
      expect(await stored(), body).toBe(before);
    }
  });
});
