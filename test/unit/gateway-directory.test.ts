// The gateway directory's clients are cached per shop and environment, and a change of
// credentials is seen at once, whenever and wherever it was made.
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import { createMemoryQuotaStore } from "../../app/gateway/quota";
import { createLogger } from "../../app/lib/logger.server";
import { createCredentialCipher } from "../../app/shops/credential-cipher.server";
import { createGatewayDirectory } from "../../app/shops/gateway-directory.server";
import { credentialContext } from "../../app/shops/shop-credentials.server";

const cipher = createCredentialCipher([{ id: "k1", key: randomBytes(32) }]);
const directory = createGatewayDirectory({
  cipher,
  baseUrls: { live: "http://127.0.0.1:9/api/v1", sandbox: "http://127.0.0.1:9/api/v1" },
  quotaStore: createMemoryQuotaStore(),
  logger: createLogger({ sink: () => undefined }),
});

function shopWith(secretHex: string) {
  const id = "shop-1";
  return {
    id,
    shopDomain: "cache.myshopify.com",
    liveDeviceKeyEnc: null,
    liveSecretKeyEnc: null,
    sandboxDeviceKeyEnc: cipher.encrypt("5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13", credentialContext(id, "sandbox", "device-key")),
    sandboxSecretKeyEnc: cipher.encrypt(secretHex, credentialContext(id, "sandbox", "secret-key")),
    liveRetiredDeviceKeyEnc: null,
    liveRetiredSecretKeyEnc: null,
    sandboxRetiredDeviceKeyEnc: null,
    sandboxRetiredSecretKeyEnc: null,
  };
}

it("reuses a shop's client while its sealed credentials are the same, and none for an environment without them", () => {
  const shop = shopWith("aa".repeat(32));
  const first = directory.forShop(shop, "sandbox");
  expect(first?.secretKeyHex).toBe("aa".repeat(32));
  expect(directory.forShop({ ...shop }, "sandbox")).toBe(first);
  expect(directory.forShop(shop, "live")).toBeNull();
});

it("sees new credentials at once, with nothing else about the shop changed", () => {
  const before = directory.forShop(shopWith("bb".repeat(32)), "sandbox");
  const after = directory.forShop(shopWith("cc".repeat(32)), "sandbox");
  expect(before?.secretKeyHex).toBe("bb".repeat(32));
  expect(after?.secretKeyHex).toBe("cc".repeat(32));
  expect(after?.client).not.toBe(before?.client);
});

it("opens retired credentials apart from the current ones, with their own client", () => {
  const current = shopWith("dd".repeat(32));
  const retired = { ...current, sandboxRetiredDeviceKeyEnc: shopWith("ee".repeat(32)).sandboxDeviceKeyEnc, sandboxRetiredSecretKeyEnc: shopWith("ee".repeat(32)).sandboxSecretKeyEnc };
  expect(directory.retiredFor(current, "sandbox")).toBeNull();
  const old = directory.retiredFor(retired, "sandbox");
  expect(old?.secretKeyHex).toBe("ee".repeat(32));
  expect(directory.forShop(retired, "sandbox")?.secretKeyHex).toBe("dd".repeat(32));
  expect(directory.retiredFor(retired, "sandbox")).toBe(old);
  expect(directory.retiredFor(retired, "live")).toBeNull();
});
