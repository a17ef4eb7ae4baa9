// Capture and void sessions for one authorization that arrive together, on SQLite and on
// PostgreSQL: an authorization is captured once and never after a void, so of two such
// requests at most one is accepted, whichever instance serves each, and a settlement of the
// payment in between is seen whole by the decision or not at all. The first request is held
// right after its decision's read; the second is let run as far as it can before the first
// goes on (on PostgreSQL, until it waits on the first's lock).
import { randomUUID } from "node:crypto";
import { setTimeout as turns } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Database } from "../../app/db/database.server";
import type { PaymentsDeps } from "../../app/payments/deps";
import { receiveFollowUpSession, type FollowUpRequest } from "../../app/payments/follow-up-sessions";
import { harnessForFile, paymentWithSession, SHOP } from "../support/follow-up-routes";
import { ROW_DATABASES } from "../support/row-databases";

type Kind = "capture" | "void";
const GID_TYPE = { capture: "CaptureSession", void: "VoidSession" } as const;

function request(kind: Kind, paymentId: string): FollowUpRequest {
  const id = randomUUID().replace(/-/g, "");
  return { id, gid: `gid://shopify/${GID_TYPE[kind]}/${id}`, payment_id: paymentId, ...(kind === "capture" ? { amount: "49.90", currency: "EUR" } : {}), test: true };
}

function held(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

type Client = Record<string, unknown>;

/**
 * The database as one request sees it: `model.method` is answered as usual, on the client or
 * inside a transaction, but handed back only once `gate` opens; `reached` settles when the
 * first such answer is in.
 */
function holding(db: Database, model: string, method: string, gate: Promise<void>): { db: Database; reached: Promise<void> } {
  const arrived = held();
  const hold = (client: Client): Client =>
    new Proxy(client, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (property === "$transaction" && typeof value === "function") {
          return (work: (tx: Client) => Promise<unknown>, ...rest: unknown[]) => (value as (...a: unknown[]) => unknown).call(target, (tx: Client) => work(hold(tx)), ...rest);
        }
        if (property !== model) return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return new Proxy(value as object, {
          get(delegate, name) {
            const fn = Reflect.get(delegate, name, delegate) as unknown;
            if (name !== method || typeof fn !== "function") return fn;
            return async (...args: unknown[]) => {
              const answer = await (fn as (...a: unknown[]) => Promise<unknown>).apply(delegate, args);
              arrived.release();
              await gate;
              return answer;
            };
          },
        });
      },
    });
  return { db: hold(db as unknown as Client) as unknown as Database, reached: arrived.promise };
}

describe.each(ROW_DATABASES)("capture and void sessions arriving together on $name", (database) => {
  const h = harnessForFile(database);
  const services = (): PaymentsDeps => h().services;
  const answers = async (paymentShopifyId: string) =>
    (await h().services.db.sessionRequest.findMany({ where: { paymentShopifyId } })).map((r) => `${r.kind}:${r.status}`).sort();

  /** Until another request waits behind the held one: on PostgreSQL it shows waiting on a lock; SQLite serves one statement at a time in a process. */
  async function blockedBehindHeld(): Promise<void> {
    if (database.name !== "PostgreSQL") return void (await turns(100));
    for (let i = 0; i < 200; i++) {
      const [row] = await h().services.db.$queryRawUnsafe<{ waiting: bigint }[]>(
        `SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (Number(row!.waiting) > 0) return;
      await turns(25);
    }
    throw new Error("the second request never waited on the first one's lock");
  }

  it("two capture sessions for one authorization at the same moment: one is accepted, the other refused as already captured", async () => {
    const { session } = await paymentWithSession(h());
    const gate = held();
    const first = holding(h().services.db, "sessionRequest", "findFirst", gate.promise);
    const second = holding(h().services.db, "sessionRequest", "findFirst", gate.promise);
    const one = receiveFollowUpSession({ ...services(), db: first.db }, { kind: "capture", shopDomain: SHOP, request: request("capture", session.id) });
    await first.reached;
    const two = receiveFollowUpSession({ ...services(), db: second.db }, { kind: "capture", shopDomain: SHOP, request: request("capture", session.id) });
    await Promise.race([second.reached, blockedBehindHeld()]);
    gate.release();
    expect((await Promise.all([one, two])).map((answer) => answer.status)).toEqual([201, 201]);
    expect(await answers(session.id)).toEqual(["capture:rejecting", "capture:resolving"]);
  });

  it("a void deciding while the payment is settled and a capture arrives: the authorization is not both voided and captured", async () => {
    const { session, payment } = await paymentWithSession(h(), { state: "awaiting_payment", resolveInShopify: false });
    const gate = held();
    // The void reads the payment still awaiting its crypto, and is held there.
    const voiding = holding(h().services.db, "payment", "findUnique", gate.promise);
    const voided = receiveFollowUpSession({ ...services(), db: voiding.db }, { kind: "void", shopDomain: SHOP, request: request("void", session.id) });
    await voiding.reached;
    // Meanwhile the gateway's notification settles the payment, and a capture arrives.
    const settled = h().services.db.payment.update({ where: { id: payment.id }, data: { state: "paid", gatewayStatus: "CO", percentage: "100.0" } });
    const captured = receiveFollowUpSession(services(), { kind: "capture", shopDomain: SHOP, request: request("capture", session.id) });
    await Promise.race([Promise.all([settled, captured]), blockedBehindHeld()]);
    gate.release();
    expect((await Promise.all([voided, captured])).map((answer) => answer.status)).toEqual([201, 201]);
    await settled;

    const accepted = (await answers(session.id)).filter((answer) => answer.endsWith(":resolving"));
    expect(accepted).toHaveLength(1);
  });
});
