import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import type { AlertKind } from "./kinds";

export type FireAlertParams = {
  kind: AlertKind;
  /** Makes the alert fire once: a second call with the same key does nothing. */
  dedupeKey: string;
  endpointId?: number | null;
  ceilingId?: number | null;
  /** The budget the alert is about (alerts.budget_id): a budget's threshold or reconciliation alert. */
  budgetId?: number | null;
  windowStart?: Date | null;
  message: string;
  details?: Record<string, unknown>;
};

/**
 * Fires an alert through ceilings.fire_alert, which inserts it once per dedupe key and queues a
 * delivery for every enabled destination in the same transaction (the outbox). True when new.
 */
export async function fireAlert(db: Db, p: FireAlertParams): Promise<boolean> {
  const rows = resultRows<{ fired: boolean }>(
    await db.execute(sql`select ceilings.fire_alert(
      ${p.kind}, ${p.dedupeKey}, ${p.endpointId ?? null}::int, ${p.ceilingId ?? null}::int,
      ${p.windowStart ? p.windowStart.toISOString() : null}::timestamptz, ${p.message},
      ${JSON.stringify(p.details ?? {})}::jsonb, ${p.budgetId ?? null}::int) as fired`),
  );
  return rows[0]?.fired === true;
}
