// Merchants and their devices: sign-up, POST /device/, device settings
// (notification URL, Secret Key, enabled) and the X-Device-Id check.
import { randomBytes, randomUUID } from "node:crypto";
import type { Clock } from "./clock.js";
import { DEMO_DEVICE_KEY, DEMO_DEVICE_NAME, DEMO_MERCHANT_ID, DEMO_MERCHANT_NAME, DEMO_SECRET_KEY_HEX } from "./demo.js";
import type { DeviceRecord, MerchantRecord, SandboxStore } from "./store.js";

const DEVICE_KEY_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type AuthResult = { ok: true; device: DeviceRecord } | { ok: false; detail: string };

export interface DeviceSettingsChange {
  notificationUrl?: string | null;
  secretKeyHex?: string;
  regenerateSecret?: boolean;
  enabled?: boolean;
}

export function newSecretKeyHex(): string {
  return randomBytes(32).toString("hex");
}

export class AccountService {
  constructor(
    private readonly store: SandboxStore,
    private readonly clock: Clock,
  ) {}

  async seedDemo(): Promise<void> {
    await this.store.insertMerchantWithDevice(
      { id: DEMO_MERCHANT_ID, name: DEMO_MERCHANT_NAME, createdMs: this.clock.now().getTime() },
      {
        apiKey: DEMO_DEVICE_KEY,
        name: DEMO_DEVICE_NAME,
        secretKeyHex: DEMO_SECRET_KEY_HEX,
        notificationUrl: null,
        enabled: true,
        createdMs: this.clock.now().getTime(),
      },
      true,
    );
  }

  /** Checks an X-Device-Id value. The detail never echoes the key. */
  async authenticate(headerValue: string | undefined): Promise<AuthResult> {
    if (headerValue === undefined || headerValue === "") {
      return { ok: false, detail: "Authentication credentials were not provided: send the device key in X-Device-Id." };
    }
    if (!DEVICE_KEY_SHAPE.test(headerValue)) {
      return { ok: false, detail: "Invalid device key in X-Device-Id (expected a UUID with no surrounding whitespace)." };
    }
    const device = await this.store.getDeviceByKey(headerValue);
    if (!device) return { ok: false, detail: "Invalid device key in X-Device-Id." };
    if (!device.enabled) return { ok: false, detail: "This device is disabled." };
    return { ok: true, device };
  }

  async createMerchant(name: string): Promise<{ merchant: MerchantRecord; device: DeviceRecord }> {
    const now = this.clock.now().getTime();
    const merchant: MerchantRecord = { id: `m_${randomBytes(6).toString("hex")}`, name, createdMs: now };
    const deviceData = {
      apiKey: randomUUID(),
      name: `${name} device`.slice(0, 128),
      secretKeyHex: newSecretKeyHex(),
      notificationUrl: null,
      enabled: true,
      createdMs: now,
    };
    await this.store.insertMerchantWithDevice(merchant, deviceData);
    const device = await this.store.getDeviceByKey(deviceData.apiKey);
    if (!device) throw new Error("device was not stored");
    return { merchant, device };
  }

  /** POST /device/: a new device of the same merchant, with a fresh key and Secret Key. */
  createDevice(merchantId: string, name: string): Promise<DeviceRecord> {
    return this.store.insertDevice({
      merchantId,
      apiKey: randomUUID(),
      name,
      secretKeyHex: newSecretKeyHex(),
      notificationUrl: null,
      enabled: true,
      createdMs: this.clock.now().getTime(),
    });
  }

  findDevice(apiKey: string): Promise<DeviceRecord | null> {
    return this.store.getDeviceByKey(apiKey);
  }

  async updateSettings(device: DeviceRecord, change: DeviceSettingsChange): Promise<DeviceRecord> {
    const next: DeviceRecord = { ...device };
    if (change.notificationUrl !== undefined) next.notificationUrl = change.notificationUrl;
    if (change.secretKeyHex !== undefined) next.secretKeyHex = change.secretKeyHex.toLowerCase();
    if (change.regenerateSecret) next.secretKeyHex = newSecretKeyHex();
    if (change.enabled !== undefined) next.enabled = change.enabled;
    await this.store.updateDevice(next);
    return next;
  }
}
