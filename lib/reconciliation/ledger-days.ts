import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { addDays, dayIn } from "./days";
import type { SettledFacts } from "./readiness-answers";

// The ledger per endpoint and UTC day (reservation_days, migration 0025): how many reservations
// each endpoint took that day and how they ended. Counting them live meant reading millions of
// reservations on every overview load; the worker rolls them up instead (job "ledger-days", every
// LEDGER_DAYS_EVERY_MS and on its first loop), and readiness reads a few rows per endpoint.
//
// A reservation's state changes for as long as it is held (a settle, a release, the sweeper's
// expiry), and holds are short, so the last ROLLUP_DAYS UTC days (today and the 7 before) are
// recounted on every run; older rows stay as they were last counted.

export const LEDGER_DAYS_EVERY_MS = 10 * 60_000;
/** Today and the 7 UTC days before it: the readiness week always falls inside them. */
export const ROLLUP_DAYS = 8;
/** Readiness' settle discipline counts the last 7 UTC days, today included. */
export const READINESS_DAYS = 7;

export type LedgerRollup = { from: string; rows: number };

/**
 * Recount the reservations of the last ROLLUP_DAYS UTC days per (endpoint, day) and upsert every
 * pair: one grouped statement on the reservations of those days, whatever the number of endpoints.
 */
export async function rollUpLedgerDays(db: Db, now: Date): Promise<LedgerRollup> {
  const from = addDays(dayIn(now, "UTC"), -(ROLLUP_DAYS - 1));
  const rows = resultRows<{ n: number }>(
    await db.execute(sql`
      with counted as (
        insert into reservation_days (endpoint_id, day, reservations, settled, released, expired, held, computed_at)
        select r.endpoint_id, (r.created_at at time zone 'UTC')::date,
               count(*),
               count(*) filter (where r.state = 'settled'),
               count(*) filter (where r.state = 'released'),
               count(*) filter (where r.state = 'expired'),
               count(*) filter (where r.state = 'held'),
               ${now.toISOString()}::timestamptz
        from reservations r
        where r.created_at >= ${`${from}T00:00:00Z`}::timestamptz
        group by 1, 2
        on conflict (endpoint_id, day) do update set
          reservations = excluded.reservations, settled = excluded.settled, released = excluded.released,
          expired = excluded.expired, held = excluded.held, computed_at = excluded.computed_at
        returning 1)
      select count(*)::int as n from counted`),
  );
  return { from, rows: rows[0]?.n ?? 0 };
}

export type LedgerWeek = SettledFacts & { computedAt: Date };

/**
 * Each endpoint's reservations of the last READINESS_DAYS UTC days (today included) by how they
 * ended, from the rollup; computedAt is the oldest count among its days (how stale the figure is).
 * An endpoint with no reservation in those days has no entry.
 */
export async function ledgerWeek(db: Db, ids: number[], now: Date): Promise<Map<number, LedgerWeek>> {
  const today = dayIn(now, "UTC");
  const rows = resultRows<{ endpoint_id: number; settled: string; released: string; expired: string; held: string; computed_at: Date | string }>(
    await db.execute(sql`
      select endpoint_id, sum(settled)::text as settled, sum(released)::text as released, sum(expired)::text as expired,
             sum(held)::text as held, min(computed_at) as computed_at
      from reservation_days
      where endpoint_id in ${ids} and day >= ${addDays(today, -(READINESS_DAYS - 1))}::date and day <= ${today}::date
      group by endpoint_id`),
  );
  return new Map(
    rows.map((r) => [
      r.endpoint_id,
      { settled: Number(r.settled), released: Number(r.released), expired: Number(r.expired), held: Number(r.held), computedAt: new Date(r.computed_at) },
    ]),
  );
}
