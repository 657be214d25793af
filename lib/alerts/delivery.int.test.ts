import { eq, sql } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations, alerts } from "@/db/schema";
import { skipWithoutDatabase, type TestDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { openPostgres } from "@/db/client";
import { deliverDueAlerts, type DeliverySettings } from "./delivery";
import { fireAlert } from "./fire";
import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from "./payload";
import { startReceiver, type TestReceiver } from "./test-receiver";

// The local receiver is on 127.0.0.1: allowed by name, as ALERT_WEBHOOK_ALLOW_HOSTS would.
const fast: DeliverySettings = { retryBaseMs: 5, retryCapMs: 20, maxAttempts: 5, timeoutMs: 2000, leaseMs: 5000, egress: { allowHosts: ["127.0.0.1"] } };
const SECRET = "0123456789abcdef0123456789abcdef";

let n = 0;
async function fire(db: TestDatabase["db"], message = "test alert"): Promise<number> {
  n += 1;
  const key = `test:${n}:${Date.now()}`;
  expect(await fireAlert(db, { kind: "threshold", dedupeKey: key, message, details: { n } })).toBe(true);
  const [row] = await db.select({ id: alerts.id }).from(alerts).where(eq(alerts.dedupeKey, key));
  if (!row) throw new Error("alert not stored");
  return row.id;
}

/** Runs delivery until nothing is pending or `rounds` runs pass (retries wait a few ms). */
async function drain(db: TestDatabase["db"], s: DeliverySettings, rounds = 40): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await deliverDueAlerts(db, s);
    const [row] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(alertDeliveries)
      .where(eq(alertDeliveries.state, "pending"));
    if ((row?.n ?? 0) === 0) return;
    await new Promise((r) => setTimeout(r, 15));
  }
}

describe.skipIf(skipWithoutDatabase())("alert delivery through the outbox to a real HTTP receiver", () => {
  const t = useTestDatabase("alert_delivery", { max: 6 });
  let receiver: TestReceiver;

  beforeEach(async () => {
    await t.db.delete(alertDestinations);
  });

  async function addWebhook(url: string, kind: "webhook" | "slack" = "webhook") {
    const [d] = await t.db
      .insert(alertDestinations)
      .values({ name: `${kind} ${url}`, kind, target: url, signingSecret: kind === "webhook" ? SECRET : null, createdBy: "test" })
      .returning();
    if (!d) throw new Error("no destination");
    return d;
  }

  it("retries with backoff after failures and delivers exactly once, signed", async () => {
    receiver = await startReceiver({ failFirst: 3 });
    try {
      const dest = await addWebhook(receiver.url);
      const alertId = await fire(t.db, "email.subscribe reached 80%");
      await drain(t.db, fast);
      expect(receiver.received.map((r) => r.status)).toEqual([500, 500, 500, 200]);
      expect(receiver.accepted()).toHaveLength(1);
      const [d] = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.alertId, alertId));
      expect(d).toMatchObject({ state: "delivered", attempts: 4, lastError: null, destinationId: dest.id });
      expect(d?.deliveredAt).toBeInstanceOf(Date);

      const got = receiver.accepted()[0];
      if (!got) throw new Error("nothing accepted");
      const header = (name: string) => {
        const v = got.headers[name.toLowerCase()];
        return typeof v === "string" ? v : null;
      };
      expect(header(DELIVERY_HEADER)).toBe(`${alertId}.${dest.id}`);
      const ok = verifySignature({
        secret: SECRET,
        timestamp: header(TIMESTAMP_HEADER),
        signature: header(SIGNATURE_HEADER),
        body: got.body,
        nowSeconds: Math.floor(Date.now() / 1000),
      });
      expect(ok).toBe(true);
      // A changed body, or the right body signed with another secret, does not verify.
      expect(
        verifySignature({
          secret: SECRET,
          timestamp: header(TIMESTAMP_HEADER),
          signature: header(SIGNATURE_HEADER),
          body: `${got.body} `,
          nowSeconds: Math.floor(Date.now() / 1000),
        }),
      ).toBe(false);
      expect(JSON.parse(got.body)).toMatchObject({ id: alertId, kind: "threshold", message: "email.subscribe reached 80%" });
    } finally {
      await receiver.close();
    }
  });

  it("records the last error and gives up after the maximum attempts, visibly", async () => {
    receiver = await startReceiver({ failFirst: 1000 });
    try {
      await addWebhook(receiver.url);
      const alertId = await fire(t.db);
      await drain(t.db, { ...fast, maxAttempts: 3 });
      const [d] = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.alertId, alertId));
      expect(d).toMatchObject({ state: "failed", attempts: 3, deliveredAt: null });
      expect(d?.lastError).toContain("HTTP 500");
      expect(receiver.received).toHaveLength(3);
    } finally {
      await receiver.close();
    }
  });

  it("sends a Slack-compatible body to slack destinations", async () => {
    receiver = await startReceiver();
    try {
      await addWebhook(receiver.url, "slack");
      await fire(t.db, "llm.chat reached 100% <of> its ceiling");
      await drain(t.db, fast);
      const body: unknown = JSON.parse(receiver.accepted()[0]?.body ?? "null");
      expect(body).toMatchObject({ text: "Threshold crossed: llm.chat reached 100% <of> its ceiling" });
      expect(JSON.stringify(body)).toContain("&lt;of&gt;");
    } finally {
      await receiver.close();
    }
  });

  it("loses nothing when the process dies between firing and sending: a new worker delivers it", async () => {
    receiver = await startReceiver();
    try {
      await addWebhook(receiver.url);
      // The alert commits with its outbox row; the "worker" that would have sent it never runs.
      const alertId = await fire(t.db);
      const [pending] = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.alertId, alertId));
      expect(pending).toMatchObject({ state: "pending", attempts: 0 });
      // A worker dies after claiming it (its lease is in the future) and before sending: the next
      // worker takes it over when the lease runs out.
      await t.db
        .update(alertDeliveries)
        .set({ attempts: 1, nextAttemptAt: sql`now() + interval '300 ms'` })
        .where(eq(alertDeliveries.alertId, alertId));
      const fresh = openPostgres(t.url, { max: 2 });
      try {
        await deliverDueAlerts(fresh.db, fast);
        expect(receiver.received).toHaveLength(0);
        await new Promise((r) => setTimeout(r, 400));
        await deliverDueAlerts(fresh.db, fast);
      } finally {
        await fresh.close();
      }
      expect(receiver.accepted()).toHaveLength(1);
      const [d] = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.alertId, alertId));
      expect(d).toMatchObject({ state: "delivered", attempts: 2 });
    } finally {
      await receiver.close();
    }
  });

  it("two workers draining at once never deliver the same row twice", async () => {
    // A slow receiver keeps claimed rows in flight while the other worker looks for work.
    receiver = await startReceiver({ delayMs: 30 });
    const a = openPostgres(t.url, { max: 2 });
    const b = openPostgres(t.url, { max: 2 });
    try {
      await addWebhook(receiver.url);
      await addWebhook(`${receiver.url}?second`);
      const ids: number[] = [];
      for (let i = 0; i < 30; i++) ids.push(await fire(t.db));
      await Promise.all([
        deliverDueAlerts(a.db, { ...fast, batchSize: 4 }),
        deliverDueAlerts(b.db, { ...fast, batchSize: 4 }),
        deliverDueAlerts(a.db, { ...fast, batchSize: 3 }),
      ]);
      const seen = receiver.received.map((r) => r.headers[DELIVERY_HEADER.toLowerCase()]);
      expect(seen).toHaveLength(60);
      expect(new Set(seen).size).toBe(60);
    } finally {
      await a.close();
      await b.close();
      await receiver.close();
    }
  });
});
