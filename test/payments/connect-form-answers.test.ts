// What the Connection page's form answers for keys typed wrong, as a browser
// without scripts posts it. Each answer says what is wrong and never shows the Secret Key, and
// nothing is stored; keys pasted with spaces or line breaks around them are taken.
import { beforeAll, expect, it } from "vitest";
import { getAdminPage, postAdminForm } from "../support/admin-pages";
import { stackForFile } from "../support/stack";

const stack = stackForFile({ workers: false, env: { DEV_ADMIN_LOGIN: "true" } });
beforeAll(() => stack().logger.info("connect form answers: started"));

const shopRow = () => stack().services.db.shop.findUniqueOrThrow({ where: { shopDomain: stack().shopDomain } });
const connect = (fields: Record<string, string>) => postAdminForm(stack(), "/app/onboarding", { intent: "connect", ...fields });

it("refuses swapped, mistyped and other-environment keys with a reason, echoing no secret and storing nothing", async () => {
  const { deviceKey, secretKeyHex } = stack().sandbox.demo;
  expect((await getAdminPage(stack(), "/app/onboarding")).status).toBe(200);
  const before = await shopRow();
  const cases: { fields: Record<string, string>; status: number; says: RegExp }[] = [
    // Swapped: the Secret Key in the key field, the key in the Secret Key field.
    { fields: { env: "sandbox", deviceKey: secretKeyHex, secretKeyHex: deviceKey }, status: 400, says: /The Secret Key must be the hexadecimal text/ },
    // A line break inside the Secret Key.
    { fields: { env: "sandbox", deviceKey, secretKeyHex: `${secretKeyHex.slice(0, 32)}\n${secretKeyHex.slice(32)}` }, status: 400, says: /The Secret Key must be the hexadecimal text/ },
    // A mistyped device key.
    { fields: { env: "sandbox", deviceKey: deviceKey.replace(/.$/, (c) => (c === "0" ? "1" : "0")), secretKeyHex }, status: 422, says: /The gateway refused this device key/ },
    // The sandbox key tried on the live gateway (unreachable in tests): the app could not do its part.
    { fields: { env: "live", deviceKey, secretKeyHex }, status: 503, says: /cannot be reached/ },
  ];
  for (const { fields, status, says } of cases) {
    const answer = await connect(fields);
    expect({ status: answer.status, says: says.test(answer.text) }).toEqual({ status, says: true });
    expect(answer.html).not.toContain(secretKeyHex);
    expect(answer.html).not.toContain(secretKeyHex.slice(0, 32));
  }
  expect(await shopRow()).toEqual(before);

  // Pasted with spaces and line breaks around: taken.
  const padded = await connect({ env: "sandbox", deviceKey: `  ${deviceKey}\r\n`, secretKeyHex: `\n\t${secretKeyHex.toUpperCase()}  \n` });
  expect(padded.status).toBe(200);
  expect(padded.text).toContain("The gateway sandbox device is connected.");
  expect(padded.html).not.toContain(secretKeyHex);
  expect(padded.html).not.toContain(secretKeyHex.toUpperCase());
});
