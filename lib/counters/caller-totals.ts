import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { logError } from "@/lib/log/redact";
import { DAY_MS } from "@/lib/time";
import { IN_FLIGHT_MS, lockClosedWindows } from "./closed-windows";

// Each account's settled units on a per-caller ceiling over the closed windows of the last 30
// days (table caller_totals): with them, the accounts that spent most over 30 days are ranked
// from a few index entries (lib/accounts/read-top.ts) instead of summing every account's counter
// of every window, which is 390,000 rows and half a second when 10,000 accounts a day each spend
// a little.
//
// A ceiling's totals hold the windows starting in [from_start, through_start): from the window
// that holds the first of the 30 days to the last window that can no longer change (over for
// IN_FLIGHT_MS, and nothing reserved in it still held). The only thing that moves such a window is
// a late overrun, and ceilings.settle deletes the ceiling's caller_totals_state row when one lands
// in it (under lockClosedWindows, which the build holds too). The worker rebuilds a ceiling's
// totals when its range can move: once a day, just after midnight for a daily ceiling.

export const CALLER_TOTALS_EVERY_MS = 10 * 60_000;
/** The days a ranking reads back, today included (lib/accounts/read-top.ts's "last 30 days"). */
export const CALLER_TOTALS_DAYS = 30;

/** The time one run builds for at most: a run is part of the worker's loop, which expiry waits on. */
export const CALLER_TOTALS_MS_A_RUN = 5_000;

export type CallerTotalsRun = { built: number; accounts: number; failed: number; left: number };

/**
 * Rebuilds the totals of every per-caller ceiling on a calendar window whose range can move (or of
 * `ceilingIds` only), each in its own short transaction.
 */
export async function buildCallerTotals(db: Db, now: Date, opts: { ceilingIds?: number[]; maxMs?: number } = {}): Promise<CallerTotalsRun> {
  const firstDay = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - (CALLER_TOTALS_DAYS - 1) * DAY_MS).toISOString();
  const only = opts.ceilingIds ? sql`and c.id = any(${sql.raw(`'{${opts.ceilingIds.map(Number).join(",")}}'::int[]`)})` : sql``;
  // Due: no totals, or totals whose range starts elsewhere or stops before the window that is open
  // IN_FLIGHT_MS ago (a held reservation may keep it from moving that far: found under the lock).
  const due = resultRows<{ ceiling_id: number; endpoint_id: number }>(
    await db.execute(sql`
      select c.id as ceiling_id, c.endpoint_id
      from ceilings c
      join endpoints e on e.id = c.endpoint_id
      cross join lateral ceilings.window_bounds(c."window", e.billing_day, 0, ${firstDay}::timestamptz) f
      cross join lateral ceilings.window_bounds(c."window", e.billing_day, 0, now() - ${sql.raw(`interval '${IN_FLIGHT_MS / 1000} seconds'`)}) t
      left join caller_totals_state s on s.ceiling_id = c.id
      where c.scope = 'caller' and c."window" in ('utc_day', 'billing_month') and e.archived_at is null ${only}
        and t.window_start > f.window_start
        and (s.ceiling_id is null or s.from_start <> f.window_start or s.through_start < t.window_start)
      order by c.id`),
  );
  const run: CallerTotalsRun = { built: 0, accounts: 0, failed: 0, left: 0 };
  const started = Date.now();
  for (const d of due) {
    // Past the run's time, the rest wait for the next run; their rankings are read without totals meanwhile.
    if (Date.now() - started > (opts.maxMs ?? CALLER_TOTALS_MS_A_RUN)) {
      run.left += 1;
      continue;
    }
    try {
      const accounts = await buildCeiling(db, d.ceiling_id, d.endpoint_id, firstDay);
      if (accounts === null) continue;
      run.built += 1;
      run.accounts += accounts;
    } catch (error) {
      // One ceiling (deleted meanwhile, say) does not stop the others'.
      run.failed += 1;
      logError(`caller totals: ceiling ${d.ceiling_id} failed`, error);
    }
  }
  return run;
}

/** One ceiling's totals, or null when its range cannot move (a reservation of its endpoint is still held). */
async function buildCeiling(db: Db, ceilingId: number, endpointId: number, firstDay: string): Promise<number | null> {
  return db.transaction(async (tx) => {
    await lockClosedWindows(tx, endpointId);
    // The held reservations are few: the held partial index finds them.
    const [range] = resultRows<{ from_start: string; through_start: string }>(
      await tx.execute(sql`
        select f.window_start::text as from_start, t.window_start::text as through_start
        from ceilings c
        join endpoints e on e.id = c.endpoint_id
        cross join lateral ceilings.window_bounds(c."window", e.billing_day, 0, ${firstDay}::timestamptz) f
        cross join lateral ceilings.window_bounds(c."window", e.billing_day, 0,
          least(now() - ${sql.raw(`interval '${IN_FLIGHT_MS / 1000} seconds'`)},
                coalesce((select min(r.created_at) from reservations r where r.state = 'held' and r.endpoint_id = ${endpointId}), 'infinity'))) t
        left join caller_totals_state s on s.ceiling_id = c.id
        where c.id = ${ceilingId} and t.window_start > f.window_start
          and (s.ceiling_id is null or s.from_start <> f.window_start or s.through_start < t.window_start)`),
    );
    if (!range) return null;
    await tx.execute(sql`delete from caller_totals where ceiling_id = ${ceilingId}`);
    const [written] = resultRows<{ n: number }>(
      await tx.execute(sql`
        with w as (
          insert into caller_totals (ceiling_id, scope_key, settled)
          select ${ceilingId}, u.scope_key, sum(u.settled)
          from usage u
          where u.ceiling_id = ${ceilingId} and u.window_start >= ${range.from_start}::timestamptz
            and u.window_start < ${range.through_start}::timestamptz and u.scope_key <> ''
          group by u.scope_key
          returning 1)
        select count(*)::int as n from w`),
    );
    await tx.execute(sql`
      insert into caller_totals_state (ceiling_id, from_start, through_start, built_at)
      values (${ceilingId}, ${range.from_start}::timestamptz, ${range.through_start}::timestamptz, now())
      on conflict (ceiling_id) do update set from_start = excluded.from_start, through_start = excluded.through_start, built_at = excluded.built_at`);
    return written?.n ?? 0;
  });
}

/**
 * Forgets the totals of these endpoints' ceilings: after counters are written for windows in the
 * past (db:fill), which enforcement never does. The worker builds them anew.
 */
export async function forgetCallerTotals(db: Db, endpointIds: number[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await db.execute(sql`
    delete from caller_totals_state s using ceilings c
    where c.id = s.ceiling_id and c.endpoint_id = any(${sql.raw(`'{${endpointIds.map(Number).join(",")}}'::int[]`)})`);
}
