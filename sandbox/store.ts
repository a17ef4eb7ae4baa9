// The sandbox's own storage: an SQLite database (via @libsql/client) holding
// merchants, devices, orders, their transactions, webhook delivery records and
// the simulated clock offset. Tables are created on open; nothing here knows
// business rules.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createClient, type Client, type InStatement, type Row } from "@libsql/client";
import { isFiatCode, type FiatCode } from "./fiat.js";
import { isOrderStatus, type OrderStatus } from "./statuses.js";

export interface MerchantRecord {
  id: string;
  name: string;
  createdMs: number;
}

export interface DeviceRecord {
  id: number;
  merchantId: string;
  apiKey: string;
  name: string;
  secretKeyHex: string;
  notificationUrl: string | null;
  enabled: boolean;
  createdMs: number;
}

export interface CustomerFields {
  [field: string]: string;
}

export interface OrderRecord {
  id: number;
  identifier: string;
  shortCode: string;
  merchantId: string;
  deviceId: number;
  createdMs: number;
  editedMs: number;
  status: OrderStatus;
  fiat: FiatCode;
  fiatAmount: string;
  currencyId: string | null;
  cryptoAmount: string | null;
  rate: string | null;
  address: string | null;
  tagMemo: string | null;
  paymentUri: string | null;
  fixedMs: number | null;
  expiredMs: number | null;
  urlOk: string | null;
  urlKo: string | null;
  urlStandby: string | null;
  language: string;
  notes: string | null;
  reference: string | null;
  internalData: string | null;
  customer: CustomerFields;
}

export interface TransactionRecord {
  id: number;
  orderId: number;
  currency: string;
  amount: string;
  txHash: string;
  block: number | null;
  confirmed: boolean;
  createdMs: number;
  late: boolean;
}

export interface DeliveryRecord {
  id: number;
  orderIdentifier: string;
  deviceId: number;
  status: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  fault: string | null;
  statusCode: number | null;
  ok: boolean;
  error: string | null;
  atMs: number;
}

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS merchants (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, created_ms INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS devices (
     id INTEGER PRIMARY KEY AUTOINCREMENT, merchant_id TEXT NOT NULL REFERENCES merchants(id),
     api_key TEXT NOT NULL UNIQUE, name TEXT NOT NULL, secret_key TEXT NOT NULL,
     notification_url TEXT, enabled INTEGER NOT NULL DEFAULT 1, created_ms INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS orders (
     id INTEGER PRIMARY KEY AUTOINCREMENT, identifier TEXT NOT NULL UNIQUE, short_code TEXT NOT NULL UNIQUE,
     merchant_id TEXT NOT NULL, device_id INTEGER NOT NULL REFERENCES devices(id),
     created_ms INTEGER NOT NULL, edited_ms INTEGER NOT NULL, status TEXT NOT NULL,
     fiat TEXT NOT NULL, fiat_amount TEXT NOT NULL, currency_id TEXT, crypto_amount TEXT, rate TEXT,
     address TEXT, tag_memo TEXT, payment_uri TEXT, fixed_ms INTEGER, expired_ms INTEGER,
     url_ok TEXT, url_ko TEXT, url_standby TEXT, language TEXT NOT NULL, notes TEXT, reference TEXT,
     internal_data TEXT, customer TEXT NOT NULL DEFAULT '{}')`,
  `CREATE INDEX IF NOT EXISTS orders_by_device ON orders (device_id, created_ms)`,
  `CREATE INDEX IF NOT EXISTS orders_open ON orders (status)`,
  `CREATE TABLE IF NOT EXISTS transactions (
     id INTEGER PRIMARY KEY AUTOINCREMENT, order_id INTEGER NOT NULL REFERENCES orders(id),
     currency TEXT NOT NULL, amount TEXT NOT NULL, tx_hash TEXT NOT NULL, block INTEGER,
     confirmed INTEGER NOT NULL, created_ms INTEGER NOT NULL, late INTEGER NOT NULL DEFAULT 0)`,
  `CREATE INDEX IF NOT EXISTS transactions_by_order ON transactions (order_id)`,
  `CREATE TABLE IF NOT EXISTS webhook_deliveries (
     id INTEGER PRIMARY KEY AUTOINCREMENT, order_identifier TEXT NOT NULL, device_id INTEGER NOT NULL,
     status TEXT NOT NULL, url TEXT NOT NULL, headers TEXT NOT NULL, body TEXT NOT NULL, fault TEXT,
     status_code INTEGER, ok INTEGER NOT NULL, error TEXT, at_ms INTEGER NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS deliveries_by_order ON webhook_deliveries (order_identifier)`,
  `CREATE TABLE IF NOT EXISTS sandbox_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
];

function str(row: Row, col: string): string {
  const v = row[col];
  if (typeof v !== "string") throw new Error(`column ${col}: expected text`);
  return v;
}
function strOrNull(row: Row, col: string): string | null {
  const v = row[col];
  if (v === null || v === undefined) return null;
  if (typeof v !== "string") throw new Error(`column ${col}: expected text`);
  return v;
}
function num(row: Row, col: string): number {
  const v = row[col];
  if (typeof v === "bigint") return Number(v);
  if (typeof v !== "number") throw new Error(`column ${col}: expected integer`);
  return v;
}
function numOrNull(row: Row, col: string): number | null {
  const v = row[col];
  if (v === null || v === undefined) return null;
  return num(row, col);
}

function toMerchant(row: Row): MerchantRecord {
  return { id: str(row, "id"), name: str(row, "name"), createdMs: num(row, "created_ms") };
}

function toDevice(row: Row): DeviceRecord {
  return {
    id: num(row, "id"),
    merchantId: str(row, "merchant_id"),
    apiKey: str(row, "api_key"),
    name: str(row, "name"),
    secretKeyHex: str(row, "secret_key"),
    notificationUrl: strOrNull(row, "notification_url"),
    enabled: num(row, "enabled") === 1,
    createdMs: num(row, "created_ms"),
  };
}

function toOrder(row: Row): OrderRecord {
  const status = str(row, "status");
  const fiat = str(row, "fiat");
  if (!isOrderStatus(status)) throw new Error(`stored order has unknown status ${status}`);
  if (!isFiatCode(fiat)) throw new Error(`stored order has unknown fiat ${fiat}`);
  const customer: unknown = JSON.parse(str(row, "customer"));
  return {
    id: num(row, "id"),
    identifier: str(row, "identifier"),
    shortCode: str(row, "short_code"),
    merchantId: str(row, "merchant_id"),
    deviceId: num(row, "device_id"),
    createdMs: num(row, "created_ms"),
    editedMs: num(row, "edited_ms"),
    status,
    fiat,
    fiatAmount: str(row, "fiat_amount"),
    currencyId: strOrNull(row, "currency_id"),
    cryptoAmount: strOrNull(row, "crypto_amount"),
    rate: strOrNull(row, "rate"),
    address: strOrNull(row, "address"),
    tagMemo: strOrNull(row, "tag_memo"),
    paymentUri: strOrNull(row, "payment_uri"),
    fixedMs: numOrNull(row, "fixed_ms"),
    expiredMs: numOrNull(row, "expired_ms"),
    urlOk: strOrNull(row, "url_ok"),
    urlKo: strOrNull(row, "url_ko"),
    urlStandby: strOrNull(row, "url_standby"),
    language: str(row, "language"),
    notes: strOrNull(row, "notes"),
    reference: strOrNull(row, "reference"),
    internalData: strOrNull(row, "internal_data"),
    customer: typeof customer === "object" && customer !== null ? (customer as CustomerFields) : {},
  };
}

function toTransaction(row: Row): TransactionRecord {
  return {
    id: num(row, "id"),
    orderId: num(row, "order_id"),
    currency: str(row, "currency"),
    amount: str(row, "amount"),
    txHash: str(row, "tx_hash"),
    block: numOrNull(row, "block"),
    confirmed: num(row, "confirmed") === 1,
    createdMs: num(row, "created_ms"),
    late: num(row, "late") === 1,
  };
}

function toDelivery(row: Row): DeliveryRecord {
  return {
    id: num(row, "id"),
    orderIdentifier: str(row, "order_identifier"),
    deviceId: num(row, "device_id"),
    status: str(row, "status"),
    url: str(row, "url"),
    headers: JSON.parse(str(row, "headers")) as Record<string, string>,
    body: str(row, "body"),
    fault: strOrNull(row, "fault"),
    statusCode: numOrNull(row, "status_code"),
    ok: num(row, "ok") === 1,
    error: strOrNull(row, "error"),
    atMs: num(row, "at_ms"),
  };
}

const ORDER_COLUMNS = [
  "identifier", "short_code", "merchant_id", "device_id", "created_ms", "edited_ms", "status", "fiat", "fiat_amount",
  "currency_id", "crypto_amount", "rate", "address", "tag_memo", "payment_uri", "fixed_ms", "expired_ms", "url_ok",
  "url_ko", "url_standby", "language", "notes", "reference", "internal_data", "customer",
] as const;

function orderValues(o: Omit<OrderRecord, "id">): Array<string | number | null> {
  return [
    o.identifier, o.shortCode, o.merchantId, o.deviceId, o.createdMs, o.editedMs, o.status, o.fiat, o.fiatAmount,
    o.currencyId, o.cryptoAmount, o.rate, o.address, o.tagMemo, o.paymentUri, o.fixedMs, o.expiredMs, o.urlOk,
    o.urlKo, o.urlStandby, o.language, o.notes, o.reference, o.internalData, JSON.stringify(o.customer),
  ];
}

export class SandboxStore {
  private constructor(private readonly db: Client) {}

  static async open(dbPath: string): Promise<SandboxStore> {
    let url: string;
    if (dbPath === ":memory:") url = ":memory:";
    else {
      mkdirSync(dirname(dbPath), { recursive: true });
      url = `file:${dbPath}`;
    }
    const db = createClient({ url });
    const store = new SandboxStore(db);
    await db.execute("PRAGMA foreign_keys = ON");
    if (dbPath !== ":memory:") await db.execute("PRAGMA journal_mode = WAL");
    await db.batch(SCHEMA, "write");
    return store;
  }

  close(): void {
    this.db.close();
  }

  async getState(key: string): Promise<string | null> {
    const r = await this.db.execute({ sql: "SELECT value FROM sandbox_state WHERE key = ?", args: [key] });
    const row = r.rows[0];
    return row ? str(row, "value") : null;
  }

  async setState(key: string, value: string): Promise<void> {
    await this.db.execute({
      sql: "INSERT INTO sandbox_state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      args: [key, value],
    });
  }

  async insertMerchantWithDevice(
    merchant: MerchantRecord,
    device: Omit<DeviceRecord, "id" | "merchantId">,
    ignoreExisting = false,
  ): Promise<void> {
    const verb = ignoreExisting ? "INSERT OR IGNORE" : "INSERT";
    await this.db.batch(
      [
        { sql: `${verb} INTO merchants (id, name, created_ms) VALUES (?, ?, ?)`, args: [merchant.id, merchant.name, merchant.createdMs] },
        {
          sql: `${verb} INTO devices (merchant_id, api_key, name, secret_key, notification_url, enabled, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
          args: [merchant.id, device.apiKey, device.name, device.secretKeyHex, device.notificationUrl, device.enabled ? 1 : 0, device.createdMs],
        },
      ],
      "write",
    );
  }

  async insertDevice(device: Omit<DeviceRecord, "id">): Promise<DeviceRecord> {
    const r = await this.db.execute({
      sql: "INSERT INTO devices (merchant_id, api_key, name, secret_key, notification_url, enabled, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
      args: [device.merchantId, device.apiKey, device.name, device.secretKeyHex, device.notificationUrl, device.enabled ? 1 : 0, device.createdMs],
    });
    return { ...device, id: Number(r.lastInsertRowid) };
  }

  async getMerchant(id: string): Promise<MerchantRecord | null> {
    const r = await this.db.execute({ sql: "SELECT * FROM merchants WHERE id = ?", args: [id] });
    return r.rows[0] ? toMerchant(r.rows[0]) : null;
  }

  async listMerchants(): Promise<MerchantRecord[]> {
    const r = await this.db.execute("SELECT * FROM merchants ORDER BY created_ms, id");
    return r.rows.map(toMerchant);
  }

  async getDeviceByKey(apiKey: string): Promise<DeviceRecord | null> {
    const r = await this.db.execute({ sql: "SELECT * FROM devices WHERE api_key = ?", args: [apiKey] });
    return r.rows[0] ? toDevice(r.rows[0]) : null;
  }

  async getDevice(id: number): Promise<DeviceRecord | null> {
    const r = await this.db.execute({ sql: "SELECT * FROM devices WHERE id = ?", args: [id] });
    return r.rows[0] ? toDevice(r.rows[0]) : null;
  }

  async listDevices(): Promise<DeviceRecord[]> {
    const r = await this.db.execute("SELECT * FROM devices ORDER BY merchant_id, id");
    return r.rows.map(toDevice);
  }

  async updateDevice(device: DeviceRecord): Promise<void> {
    await this.db.execute({
      sql: "UPDATE devices SET name = ?, secret_key = ?, notification_url = ?, enabled = ? WHERE id = ?",
      args: [device.name, device.secretKeyHex, device.notificationUrl, device.enabled ? 1 : 0, device.id],
    });
  }

  async insertOrder(order: Omit<OrderRecord, "id">): Promise<OrderRecord> {
    const placeholders = ORDER_COLUMNS.map(() => "?").join(", ");
    const r = await this.db.execute({
      sql: `INSERT INTO orders (${ORDER_COLUMNS.join(", ")}) VALUES (${placeholders})`,
      args: orderValues(order),
    });
    return { ...order, id: Number(r.lastInsertRowid) };
  }

  async shortCodeExists(code: string): Promise<boolean> {
    const r = await this.db.execute({ sql: "SELECT 1 FROM orders WHERE short_code = ?", args: [code] });
    return r.rows.length > 0;
  }

  async getOrderByIdentifier(identifier: string): Promise<OrderRecord | null> {
    const r = await this.db.execute({ sql: "SELECT * FROM orders WHERE identifier = ?", args: [identifier] });
    return r.rows[0] ? toOrder(r.rows[0]) : null;
  }

  async getOrderByShortCode(code: string): Promise<OrderRecord | null> {
    const r = await this.db.execute({ sql: "SELECT * FROM orders WHERE short_code = ?", args: [code] });
    return r.rows[0] ? toOrder(r.rows[0]) : null;
  }

  /** A device's orders created in [fromMs, toMs), newest first. */
  async listOrdersOfDevice(deviceId: number, fromMs: number, toMs: number): Promise<OrderRecord[]> {
    const r = await this.db.execute({
      sql: "SELECT * FROM orders WHERE device_id = ? AND created_ms >= ? AND created_ms < ? ORDER BY created_ms DESC, id DESC",
      args: [deviceId, fromMs, toMs],
    });
    return r.rows.map(toOrder);
  }

  async listRecentOrders(limit: number): Promise<OrderRecord[]> {
    const r = await this.db.execute({ sql: "SELECT * FROM orders ORDER BY created_ms DESC, id DESC LIMIT ?", args: [limit] });
    return r.rows.map(toOrder);
  }

  /** Open orders whose time-based end may have come: PE past expiry, NR older than the cut-off. */
  async listOrdersDueForTime(nowMs: number, nrCreatedBeforeMs: number): Promise<OrderRecord[]> {
    const r = await this.db.execute({
      sql: `SELECT * FROM orders WHERE (status = 'PE' AND expired_ms IS NOT NULL AND expired_ms <= ?)
              OR (status = 'NR' AND created_ms <= ?) ORDER BY id`,
      args: [nowMs, nrCreatedBeforeMs],
    });
    return r.rows.map(toOrder);
  }

  async listTransactions(orderId: number): Promise<TransactionRecord[]> {
    const r = await this.db.execute({ sql: "SELECT * FROM transactions WHERE order_id = ? ORDER BY id", args: [orderId] });
    return r.rows.map(toTransaction);
  }

  /** Writes an order and any new or changed transactions in one transaction. */
  async saveOrder(
    order: OrderRecord,
    newTransactions: ReadonlyArray<Omit<TransactionRecord, "id">> = [],
    changedTransactions: readonly TransactionRecord[] = [],
  ): Promise<void> {
    const assignments = ORDER_COLUMNS.map((c) => `${c} = ?`).join(", ");
    const stmts: InStatement[] = [
      { sql: `UPDATE orders SET ${assignments} WHERE id = ?`, args: [...orderValues(order), order.id] },
    ];
    for (const t of newTransactions) {
      stmts.push({
        sql: "INSERT INTO transactions (order_id, currency, amount, tx_hash, block, confirmed, created_ms, late) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        args: [t.orderId, t.currency, t.amount, t.txHash, t.block, t.confirmed ? 1 : 0, t.createdMs, t.late ? 1 : 0],
      });
    }
    for (const t of changedTransactions) {
      stmts.push({
        sql: "UPDATE transactions SET amount = ?, tx_hash = ?, block = ?, confirmed = ? WHERE id = ?",
        args: [t.amount, t.txHash, t.block, t.confirmed ? 1 : 0, t.id],
      });
    }
    await this.db.batch(stmts, "write");
  }

  async insertDelivery(d: Omit<DeliveryRecord, "id">): Promise<void> {
    await this.db.execute({
      sql: `INSERT INTO webhook_deliveries (order_identifier, device_id, status, url, headers, body, fault, status_code, ok, error, at_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [d.orderIdentifier, d.deviceId, d.status, d.url, JSON.stringify(d.headers), d.body, d.fault, d.statusCode, d.ok ? 1 : 0, d.error, d.atMs],
    });
  }

  async listDeliveries(filter: { orderIdentifier?: string; deviceId?: number }): Promise<DeliveryRecord[]> {
    const where: string[] = [];
    const args: Array<string | number> = [];
    if (filter.orderIdentifier !== undefined) {
      where.push("order_identifier = ?");
      args.push(filter.orderIdentifier);
    }
    if (filter.deviceId !== undefined) {
      where.push("device_id = ?");
      args.push(filter.deviceId);
    }
    const r = await this.db.execute({
      sql: `SELECT * FROM webhook_deliveries ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id`,
      args,
    });
    return r.rows.map(toDelivery);
  }
}
