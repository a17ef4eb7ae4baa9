// The demo merchant and device the sandbox seeds on start. The key is a fixed
// UUID v4 known only to the sandbox, so local tooling can talk to it at once.
export const DEMO_MERCHANT_ID = "demo-merchant";
export const DEMO_MERCHANT_NAME = "Demo merchant";
export const DEMO_DEVICE_KEY = "5b0f3c1e-8d2a-4c7b-9e61-2f4a7d9c0b13";
export const DEMO_DEVICE_NAME = "Demo device";
export const DEMO_SECRET_KEY_HEX = "7d3c9a41e2b8f05d6c1a9e84b37f20d5c8e1f6a29b4d07e3a5c2f81b96d04e7a";

export interface DemoAccount {
  merchantId: string;
  deviceKey: string;
  secretKeyHex: string;
  deviceName: string;
}

export const DEMO_ACCOUNT: DemoAccount = {
  merchantId: DEMO_MERCHANT_ID,
  deviceKey: DEMO_DEVICE_KEY,
  secretKeyHex: DEMO_SECRET_KEY_HEX,
  deviceName: DEMO_DEVICE_NAME,
};
