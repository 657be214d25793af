import { sql, type SQL } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

// Each limit's counters summed per window: what the overview, the sparklines and a budget's
// history show. A per-account limit has a counter per account and window, and summing a hundred
// thousand of them on every load (every 5 s on the overview) cost 100-150 ms a statement at
// production size, so the worker keeps the sums (table window_totals) and readers combine them
// with what the table does not hold yet, read live:
//
// - Closed windows ("window-totals-closed", every CLOSED_EVERY_MS): every window that ended at or
//   before window_totals_state.closed_through has its row. Each run counts the windows that ended
//   since RECOUNT_MS before the last run, so a settle or an expiry that lands after its window
//   closed is in the row within one run; the first run counts the whole history.
// - Open windows ("window-totals-open", every OPEN_EVERY_MS): only windows of at least
//   BIG_WINDOW counters are counted, and a row is read only while younger than FRESH_MS; smaller
//   open windows are read live, exactly, because they are cheap.
//
// Only calendar windows (utc_day, billing_month) are counted: a cooldown's windows open per
// destination at any instant and are read live. Readers give the same numbers with or without the
// table (a test compares them), but for what moved in the last run's interval.

export type CounterKind = "ceiling" | "budget";

export const CLOSED_EVERY_MS = 10 * 60_000;
export const OPEN_EVERY_MS = 10_000;
/** An open window's row is read while it is younger than this (a few missed runs of the job). */
export const FRESH_MS = 60_000;
/** A late settle moves a closed window's counters: closed windows are recounted for this long. */
export const RECOUNT_MS = 3 * 86_400_000;
/** Open windows with fewer counters than this are read live. */
export const BIG_WINDOW = 10_000;

/**
 * The counter rows of a kind, as `u` joined to their limit `c`, with the limit's id as `limit_id`,
 * whether a row is in the limit's scope, and the limit's billing day (an endpoint's, a budget's).
 */
function counters(kind: CounterKind): { from: SQL; limits: SQL; counterTable: SQL; limitId: SQL; inScope: SQL; billingDay: SQL } {
  if (kind === "ceiling") {
    return {
      from: sql`usage u join ceilings c on c.id = u.ceiling_id`,
      limits: sql`ceilings c`,
      counterTable: sql`usage u`,
      limitId: sql`u.ceiling_id`,
      inScope: sql`true`,
      billingDay: sql`(select e.billing_day from endpoints e where e.id = c.endpoint_id)`,
    };
  }
  // A budget's counters in its scope: a global budget's one counter, a per-account budget's
  // accounts' (budget_usage keeps both for a budget whose scope changed).
  return {
    from: sql`budget_usage u join budgets c on c.id = u.budget_id`,
    limits: sql`budgets c`,
    counterTable: sql`budget_usage u`,
    limitId: sql`u.budget_id`,
    inScope: sql`(case when c.scope = 'global' then u.scope_key = '' else u.scope_key <> '' end)`,
    billingDay: sql`c.billing_day`,
  };
}

const calendar = sql`c."window" in ('utc_day', 'billing_month')`;

function aggregates(inScope: SQL): SQL {
  return sql`count(*) filter (where ${inScope}) as counters,
    count(*) filter (where ${inScope} and u.scope_key <> '') as accounts,
    coalesce(sum(u.held) filter (where ${inScope}), 0)::bigint as held,
    coalesce(sum(u.settled) filter (where ${inScope}), 0)::bigint as settled,
    coalesce(max(u.held + u.settled) filter (where ${inScope}), 0)::bigint as busiest`;
}

/**
 * Writes the sums of the windows of `kind` that `where` picks (and `having`, on the group) into
 * window_totals as of `at`; returns how many windows it wrote.
 */
async function writeTotals(db: Db, kind: CounterKind, at: string, where: SQL, having: SQL = sql``): Promise<number> {
  const { from, limitId, inScope } = counters(kind);
  const rows = resultRows<{ n: number }>(
    await db.execute(sql`
      with written as (
        insert into window_totals (kind, limit_id, window_start, window_end, counters, accounts, held, settled, busiest, computed_at)
        select ${kind}, ${limitId}, u.window_start, max(u.window_end), ${aggregates(inScope)}, ${at}::timestamptz
        from ${from} where ${calendar} and ${where}
        group by ${limitId}, u.window_start ${having}
        on conflict (kind, limit_id, window_start) do update set
          window_end = excluded.window_end, counters = excluded.counters, accounts = excluded.accounts,
          held = excluded.held, settled = excluded.settled, busiest = excluded.busiest, computed_at = excluded.computed_at
        returning 1)
      select count(*)::int as n from written`),
  );
  return rows[0]?.n ?? 0;
}

/** Counts the windows that closed since the last run (less RECOUNT_MS), then moves closed_through to `now`. */
export async function countClosedWindows(db: Db, kind: CounterKind, now: Date): Promise<{ windows: number; skipped?: true }> {
  return db.transaction(async (tx) => {
    // Two workers: one counts, the other skips (the rows would be the same).
    const [lock] = resultRows<{ ok: boolean }>(await tx.execute(sql`select pg_try_advisory_xact_lock(hashtext(${`window-totals-closed:${kind}`})) as ok`));
    if (!lock?.ok) return { windows: 0, skipped: true as const };
    const [state] = resultRows<{ closed_through: Date | string }>(await tx.execute(sql`select closed_through from window_totals_state where kind = ${kind}`));
    const at = now.toISOString();
    // A window ends at most 31 days after it starts (a billing month), which bounds its start for the index.
    const since = state ? new Date(new Date(state.closed_through).getTime() - RECOUNT_MS).toISOString() : null;
    const range = since
      ? sql`u.window_start > ${since}::timestamptz - interval '32 days' and u.window_end > ${since}::timestamptz and u.window_end <= ${at}::timestamptz`
      : sql`u.window_end <= ${at}::timestamptz`;
    const windows = await writeTotals(tx, kind, at, range);
    await tx.execute(sql`
      insert into window_totals_state (kind, closed_through) values (${kind}, ${at}::timestamptz)
      on conflict (kind) do update set closed_through = excluded.closed_through`);
    return { windows };
  });
}

/** Counts the open windows of at least `big` counters (BIG_WINDOW). */
export async function countOpenWindows(db: Db, kind: CounterKind, now: Date, big = BIG_WINDOW): Promise<{ windows: number }> {
  const at = now.toISOString();
  const open = sql`u.window_start > ${at}::timestamptz - interval '32 days' and u.window_start <= ${at}::timestamptz and u.window_end > ${at}::timestamptz`;
  return { windows: await writeTotals(db, kind, at, open, sql`having count(*) >= ${big}`) };
}

/** Which windows a read covers: those open at `open`, or those starting in [from, to). */
export type WindowRange = { open: Date } | { from: Date; to: Date; now: Date };

/**
 * A select of one row per limit (of `ids`: ids, or an int[] expression) and window in `range`, with columns limit_id,
 * window_start, window_end, counters, accounts, held, settled and busiest: the worker's row where
 * it has one that holds (a closed window counted, an open one fresh), the counters summed live
 * otherwise. The live part never reads a window the table holds: a big window is skipped by its
 * limit's id before any of its counters is read.
 */
export function windowTotalsOf(kind: CounterKind, ids: number[] | SQL, range: WindowRange): SQL {
  const now = ("open" in range ? range.open : range.now).toISOString();
  const idList = Array.isArray(ids) ? sql.raw(`'{${ids.map(Number).join(",")}}'::int[]`) : ids;
  const { limits, counterTable, limitId, inScope, billingDay } = counters(kind);
  const fresh = sql`t.window_start <= ${now}::timestamptz and t.window_end > ${now}::timestamptz
    and t.computed_at > ${now}::timestamptz - make_interval(secs => ${FRESH_MS / 1000})`;
  // The limits whose open window the table holds fresh: their open window is not read live.
  const freshIds = sql`array(select t.limit_id from window_totals t where t.kind = ${kind} and t.limit_id = any(${idList}) and ${fresh})`;
  const stored = sql`select t.limit_id, t.window_start, t.window_end, t.counters, t.accounts, t.held, t.settled, t.busiest from window_totals t`;
  const closedThrough = sql`coalesce((select s.closed_through from window_totals_state s where s.kind = ${kind}), '-infinity'::timestamptz)`;
  if ("open" in range) {
    // Each limit's open calendar window by its start, so the counters are an index range per
    // limit; a first_hit cooldown's windows (one per destination) by the range they can start in.
    // A lateral subquery per limit: each is an index range of (limit, window start), never a scan of
    // every counter.
    const cooldowns =
      kind === "ceiling"
        ? sql`
      union all
      select c.id as limit_id, x.window_start, x.window_end, x.counters, x.accounts, x.held, x.settled, x.busiest
      from ceilings c
      cross join lateral (
        select u.window_start, max(u.window_end) as window_end, ${aggregates(inScope)}
        from usage u
        where u.ceiling_id = c.id and u.window_start > ${now}::timestamptz - make_interval(secs => c.window_seconds)
          and u.window_start <= ${now}::timestamptz and u.window_end > ${now}::timestamptz
        group by u.window_start
      ) x
      where c.id = any(${idList}) and c."window" = 'first_hit'`
        : sql``;
    return sql`
      ${stored} where t.kind = ${kind} and t.limit_id = any(${idList}) and ${fresh}
      union all
      select c.id as limit_id, w.window_start, x.window_end, x.counters, x.accounts, x.held, x.settled, x.busiest
      from ${limits}
      cross join lateral ceilings.window_bounds(c."window", ${billingDay}, 0, ${now}::timestamptz) w
      cross join lateral (
        select max(u.window_end) as window_end, ${aggregates(inScope)}
        from ${counterTable}
        where ${limitId} = c.id and u.window_start = w.window_start
        having count(*) > 0
      ) x
      where c.id = any(${idList}) and not (c.id = any(${freshIds})) and ${calendar}
      ${cooldowns}`;
  }
  const start = range.from.toISOString();
  const end = range.to.toISOString();
  // The counters the table does not hold, summed per window: a lateral read per limit of `which`
  // kind of window, each an index range of (limit, window start).
  const live = (which: SQL, bound: SQL) => sql`
    select c.id as limit_id, x.window_start, x.window_end, x.counters, x.accounts, x.held, x.settled, x.busiest
    from ${limits}
    cross join lateral (
      select u.window_start, max(u.window_end) as window_end, ${aggregates(inScope)}
      from ${counterTable}
      where ${limitId} = c.id and u.window_start >= ${start}::timestamptz and u.window_start < ${end}::timestamptz and ${bound}
        and (u.window_end <= ${now}::timestamptz or not (c.id = any(${freshIds})))
      group by u.window_start
    ) x
    where c.id = any(${idList}) and ${which}`;
  // A calendar window the table does not hold ended after closed_through, so it started less than
  // its length before: a day, or 32 days for a billing month (31 at most, whatever the billing day).
  // A limit's window never changes (a budget's is fixed at creation, a ceiling's is part of what
  // it is), so every counter of a daily limit is one day long. That bounds the index's range:
  // without it the read went through every counter of the range to keep those few (a per-account
  // budget's 90 days: 35 ms alone, 75-150 ms on its page). A cooldown's windows are never counted
  // by the worker: read in full.
  const longest = sql`case when c."window" = 'utc_day' then interval '1 day' else interval '32 days' end`;
  return sql`
    ${stored}
    where t.kind = ${kind} and t.limit_id = any(${idList}) and t.window_start >= ${start}::timestamptz and t.window_start < ${end}::timestamptz
      and (t.window_end <= ${closedThrough} or (${fresh}))
    union all
    ${live(calendar, sql`u.window_end > ${closedThrough} and u.window_start > ${closedThrough} - ${longest}`)}
    union all
    ${live(sql`not ${calendar}`, sql`true`)}`;
}
