import { type SQL, sql } from "drizzle-orm";
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

/** skipped: another worker held the rollup's lock, so this run counted nothing (that one counts). */
export type LedgerRollup = { from: string; rows: number; skipped?: true };

/** The transaction advisory lock one rollup holds: two workers never upsert the same rows at once. */
export const LEDGER_DAYS_LOCK = "ledger-days";

/** The rollup's one statement (exported for the plan test: it must read the index per endpoint). */
export function rollupStatement(from: string, now: Date): SQL {
  return sql`
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
      where r.endpoint_id = any(array(select id from endpoints)) and r.created_at >= ${`${from}T00:00:00Z`}::timestamptz
      group by 1, 2
      order by 1, 2
      on conflict (endpoint_id, day) do update set
        reservations = excluded.reservations, settled = excluded.settled, released = excluded.released,
        expired = excluded.expired, held = excluded.held, computed_at = excluded.computed_at
      returning 1)
    select count(*)::int as n from counted`;
}

/**
 * Recount the reservations of the last ROLLUP_DAYS UTC days per (endpoint, day) and upsert every
 * pair. The reservations are read through reservations_endpoint_created_idx (endpoint_id,
 * created_at), one range per endpoint (`endpoint_id = any(every endpoint)`), never the whole table:
 * `created_at >= from` alone has no index to use (Postgres 15 has no skip scan) and read every
 * reservation ever taken. The ranges are ORed into one bitmap, so each page is read once however
 * many endpoints' rows it holds (a lateral count per endpoint read a page once per endpoint).
 * Under a transaction advisory lock, tried, not waited for: a second worker running it at the same
 * time skips (the first one's counts are as fresh), so two upserts never lock the same rows in
 * different orders and deadlock; the rows are upserted in (endpoint, day) order too. The planner's
 * estimate of the ranges is crude (an array of unknown length), so JIT is off for it (compiling took
 * longer than the count) and work_mem is raised for it (the grouping sort spilled to disk).
 */
export async function rollUpLedgerDays(db: Db, now: Date): Promise<LedgerRollup> {
  const from = addDays(dayIn(now, "UTC"), -(ROLLUP_DAYS - 1));
  return db.transaction(async (tx) => {
    const [lock] = resultRows<{ got: boolean }>(await tx.execute(sql`select pg_try_advisory_xact_lock(hashtext(${LEDGER_DAYS_LOCK})) as got`));
    if (!lock?.got) return { from, rows: 0, skipped: true as const };
    await tx.execute(sql`select set_config('jit', 'off', true), set_config('work_mem', '64MB', true)`);
    const rows = resultRows<{ n: number }>(await tx.execute(rollupStatement(from, now)));
    return { from, rows: rows[0]?.n ?? 0 };
  });
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
