import { and, eq, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { alertDeliveries, alertDestinations, alerts, endpoints } from "@/db/schema";
import { EgressRefused, postChecked, type EgressPolicy } from "./egress";
import { readSecret } from "@/lib/env";
import { sendAlertEmail, type SecretLookup } from "./email";
import { buildRequest, retryDelayMs, type OutgoingAlert } from "./payload";

// Drains the outbox. A due delivery is claimed with FOR UPDATE SKIP LOCKED and leased (its next
// attempt moved past the send timeout) in a short transaction; the HTTP call runs outside any
// transaction; the result is written after. Two workers never claim the same row, and a worker
// that dies mid-send leaves the row pending: it is retried when the lease runs out. A receiver may
// therefore see a delivery again only after such a crash: X-Ceilings-Delivery lets it deduplicate.

export type DeliverySettings = {
  retryBaseMs: number;
  retryCapMs: number;
  maxAttempts: number;
  /** Time given to one HTTP call. */
  timeoutMs?: number;
  /** How long a claim holds a row; longer than the timeout. */
  leaseMs?: number;
  batchSize?: number;
  /** Public URL of the dashboard, for links in messages. */
  baseUrl?: string;
  random?: () => number;
  /** Which destinations may be reached: inside addresses only for allow-listed hosts. */
  egress: EgressPolicy;
  /** Reads the SMTP password a destination refers to; default the worker's environment. */
  secrets?: SecretLookup;
};

export type DeliveryRunResult = { delivered: number; retried: number; failed: number };

type Claimed = { alertId: number; destinationId: number; attempts: number };

async function claimDue(db: Db, batchSize: number, leaseMs: number): Promise<Claimed[]> {
  const rows = resultRows<{ alert_id: number; destination_id: number; attempts: number }>(
    await db.execute(sql`
      with due as (
        select alert_id, destination_id from alert_deliveries
        where state = 'pending' and next_attempt_at <= now()
        order by next_attempt_at, alert_id, destination_id
        limit ${batchSize}::int
        for update skip locked
      )
      update alert_deliveries d
      set attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ${leaseMs / 1000}::float8)
      from due
      where d.alert_id = due.alert_id and d.destination_id = due.destination_id
      returning d.alert_id, d.destination_id, d.attempts`),
  );
  return rows.map((r) => ({ alertId: r.alert_id, destinationId: r.destination_id, attempts: r.attempts }));
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.name === "TimeoutError" ? "timed out" : error.message}${cause}`.slice(0, 500);
  }
  return String(error).slice(0, 500);
}

// What is stored of an answer: the status and a short, sanitised excerpt. Viewers read it on
// /alerts, so a destination must never be a way to read another server's responses.
async function send(url: string, body: string, headers: Record<string, string>, s: DeliverySettings): Promise<string | null> {
  try {
    const response = await postChecked(url, body, headers, { policy: s.egress, timeoutMs: s.timeoutMs ?? 10_000 });
    if (response.status >= 200 && response.status < 300) return null;
    return `HTTP ${response.status}${response.excerpt ? `: ${response.excerpt}` : ""}`;
  } catch (error) {
    if (error instanceof EgressRefused) return `refused: ${error.message}`;
    return describeError(error);
  }
}

async function recordOutcome(db: Db, c: Claimed, error: string | null, s: DeliverySettings): Promise<keyof DeliveryRunResult> {
  const key = and(eq(alertDeliveries.alertId, c.alertId), eq(alertDeliveries.destinationId, c.destinationId), eq(alertDeliveries.state, "pending"));
  if (error === null) {
    await db
      .update(alertDeliveries)
      .set({ state: "delivered", deliveredAt: sql`now()`, lastError: null })
      .where(key);
    return "delivered";
  }
  if (c.attempts >= s.maxAttempts) {
    await db.update(alertDeliveries).set({ state: "failed", lastError: error }).where(key);
    return "failed";
  }
  const delay = retryDelayMs({ attempts: c.attempts, baseMs: s.retryBaseMs, capMs: s.retryCapMs, random: s.random });
  await db
    .update(alertDeliveries)
    .set({ lastError: error, nextAttemptAt: sql`now() + make_interval(secs => ${delay / 1000}::float8)` })
    .where(key);
  return "retried";
}

async function deliverOne(db: Db, c: Claimed, s: DeliverySettings): Promise<keyof DeliveryRunResult> {
  const [row] = await db
    .select({ alert: alerts, destination: alertDestinations, endpointKey: endpoints.key })
    .from(alerts)
    .innerJoin(alertDestinations, eq(alertDestinations.id, c.destinationId))
    .leftJoin(endpoints, eq(endpoints.id, alerts.endpointId))
    .where(eq(alerts.id, c.alertId));
  if (!row) return "failed";
  const { alert, destination } = row;
  if (!destination.enabled) return recordOutcome(db, { ...c, attempts: s.maxAttempts }, "destination was disabled before delivery", s);
  const outgoing: OutgoingAlert = { ...alert, endpointKey: row.endpointKey ?? null };
  if (destination.kind === "email") {
    const error = await sendAlertEmail(destination, outgoing, { baseUrl: s.baseUrl, timeoutMs: s.timeoutMs, secrets: s.secrets ?? readSecret });
    return recordOutcome(db, c, error, s);
  }
  const request = buildRequest({
    kind: destination.kind,
    alert: outgoing,
    destinationId: destination.id,
    signingSecret: destination.signingSecret,
    nowSeconds: Math.floor(Date.now() / 1000),
    baseUrl: s.baseUrl,
  });
  const error = await send(destination.target, request.body, request.headers, s);
  return recordOutcome(db, c, error, s);
}

/** Sends every due delivery, a batch at a time, until none is due. */
export async function deliverDueAlerts(db: Db, s: DeliverySettings): Promise<DeliveryRunResult> {
  const result: DeliveryRunResult = { delivered: 0, retried: 0, failed: 0 };
  const batchSize = s.batchSize ?? 20;
  const leaseMs = s.leaseMs ?? Math.max(60_000, (s.timeoutMs ?? 10_000) * 3);
  // Bounded so one loop cannot spin forever on a destination that fails instantly.
  for (let round = 0; round < 50; round++) {
    const claimed = await claimDue(db, batchSize, leaseMs);
    if (claimed.length === 0) break;
    const outcomes = await Promise.all(claimed.map((c) => deliverOne(db, c, s)));
    for (const o of outcomes) result[o] += 1;
  }
  return result;
}
