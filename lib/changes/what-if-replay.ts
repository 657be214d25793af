import { sql, type SQL } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { DAY_MS, utcDay } from "@/lib/time";
import { billingMonthWindow } from "@/lib/limits/windows";
import { indexIn, readGrants, type DayGrants, type GrantField } from "./what-if-days";

// The replay of a ledger against a value (see what-if.ts for the model) over calendar windows.
// Days whose usage counters show they cannot refuse are skipped; the rest are read as columns
// (lib/changes/what-if-days.ts: closed days from their written ledger) and replayed grant by grant
// in one loop over typed arrays: a month of a million grants replays in tens of milliseconds,
// whatever the value, so there is no shortcut to keep exact.

export type ReplayScope = "global" | "caller" | "destination";
export type ReplayWindow = "utc_day" | "billing_month";
export type ReplayMetric = "units" | "calls" | "money";

export type ReplayQuery = {
  endpointIds: number[];
  metric: ReplayMetric;
  scope: ReplayScope;
  window: ReplayWindow;
  billingDay: number;
  value: number;
  /** Grants from here are replayed (the start of the window open at `since`). */
  from: Date;
  /** Grants from here are reported. */
  since: Date;
  until: Date;
  /** The per-account limits in force (override, else plan): a ceiling's or a budget's. */
  limits: { ceilingId: number } | { budgetId: number } | null;
  /** The existing ceiling's usage counters, to skip the UTC days that cannot refuse (utc_day only). */
  skip: ReplaySkip | null;
};

/**
 * A day is skipped without reading its grants when every counter of it, as the ceiling's usage
 * row holds it (its grants' final charges, counted by reserve and resolve), plus the largest check
 * a grant can have (1 call, or the per-call max in units: reserve refuses more), fits the limit:
 * the replayed counter before any grant is at most the row's total, so nothing there is refused.
 * Its granted count is the row's reservations. Only days that began after the ceiling was made
 * (every grant then charged it) and that ended before `until` (the row holds no later grant).
 */
export type ReplaySkip = { ceilingId: number; maxCheck: number; completeFrom: Date };

export type DayTotals = { granted: number; refused: number; refusedMoney: number };
export type AccountTotals = { refused: number; refusedMoney: number };
/** Per reported day: its totals, and the refused calls of each account that day. */
export type ReplayResult = { days: Map<string, DayTotals>; accounts: Map<string, Map<string, AccountTotals>> };

/** The accounts' refused calls and money over the days from `since` (a UTC day, 'YYYY-MM-DD'). */
export function accountsSince(r: ReplayResult, since: string): Map<string, AccountTotals> {
  const out = new Map<string, AccountTotals>();
  for (const [day, accounts] of r.accounts) {
    if (day < since) continue;
    for (const [account, a] of accounts) {
      const sum = out.get(account) ?? { refused: 0, refusedMoney: 0 };
      out.set(account, sum);
      sum.refused += a.refused;
      sum.refusedMoney += a.refusedMoney;
    }
  }
  return out;
}

// What binds each scope key: the value, unless the account has its own override or plan value
// (as caller_limit and account_budget_limit say; 0 switches every account off, as a kill does).
function limitsCte(q: ReplayQuery, keys: SQL): SQL {
  const value = sql`${q.value}::bigint`;
  if (q.limits === null || q.scope === "global" || q.scope === "destination") return sql`select s.k, ${value} as lim from (${keys}) s`;
  const defaultPlan = sql`(select d.id from plans d where d.is_default)`;
  const limitId =
    "ceilingId" in q.limits
      ? sql`(select c.limit_id from ceilings c where c.id = ${q.limits.ceilingId})`
      : sql`(select b.limit_id from budgets b where b.id = ${q.limits.budgetId})`;
  return sql`select s.k, case when ${value} = 0 then 0 else coalesce(o.value, pv.value, ${value}) end as lim
    from (${keys}) s
    left join accounts a on a.account = s.k
    left join limit_overrides o on o.limit_id = ${limitId} and o.caller = s.k and (o.expires_at is null or o.expires_at > now())
    left join plan_limit_values pv on pv.limit_id = ${limitId} and pv.plan_id = coalesce(a.plan_id, ${defaultPlan})`;
}

/**
 * The replay: the days that cannot refuse from the usage rows, the rest read as columns (written
 * closed days from what_if_days, the others from the reservations) and replayed in order, one
 * counter per scope key, reset when the window changes.
 */
export async function replayFast(db: Db, q: ReplayQuery): Promise<ReplayResult> {
  const result: ReplayResult = { days: new Map(), accounts: new Map() };
  const skipped = await skippableDays(db, q);
  for (const [day, granted] of skipped) result.days.set(day, { granted, refused: 0, refusedMoney: 0 });
  const days = daysToRead(q, skipped);
  const fields = new Set<GrantField>(["finalMoney", "caller"]);
  if (q.metric === "units") ["amount", "finalUnits"].forEach((f) => fields.add(f as GrantField));
  if (q.metric === "money") fields.add("money");
  if (q.metric === "calls") fields.add("free");
  if (q.scope === "destination") fields.add("destination");
  const read = await readGrants(db, q.endpointIds, days, q.until, fields);
  const keys = scopeKeys(read, q.scope);
  const limits = await limitsOf(db, q, keys.names);
  const since = utcDay(q.since.getTime());
  const counters = new Float64Array(keys.names.length);
  const refusedCalls = new Float64Array(keys.callers.length);
  const refusedMoney = new Float64Array(keys.callers.length);
  let window = "";
  read.forEach(({ day, grants: g }, d) => {
    // Windows only move forward: a new one starts every counter at 0.
    const w = windowOf(q, day);
    if (w !== window) {
      window = w;
      counters.fill(0);
    }
    const calls = q.metric === "calls";
    const totals = replayDay({
      n: g.n,
      // A call checks 1 and charges 1, or nothing for a release with no overrun.
      check: calls ? new Uint8Array(g.n).fill(1) : q.metric === "units" ? g.amount : g.money,
      charge: calls ? Uint8Array.from(g.free, (free) => 1 - free) : q.metric === "units" ? g.finalUnits : g.finalMoney,
      money: g.finalMoney,
      // Day-local indexes to the replay's: the counter's (none for global) and the caller's.
      key: q.scope === "caller" ? g.caller : q.scope === "destination" ? g.destination : null,
      keyTo: keys.keyTo[d] as Int32Array,
      caller: g.caller,
      callerTo: keys.callerTo[d] as Int32Array,
      limits,
      counters,
      refusedCalls,
      refusedMoney,
    });
    const reported = day >= since;
    if (reported) result.days.set(day, { granted: totals.granted, refused: totals.refused, refusedMoney: totals.money });
    for (const c of totals.touched) {
      if (reported) accountsOf(result, day).set(keys.callers[c] ?? "", { refused: refusedCalls[c] ?? 0, refusedMoney: refusedMoney[c] ?? 0 });
      refusedCalls[c] = 0;
      refusedMoney[c] = 0;
    }
  });
  return result;
}

type Numbers = ArrayLike<number>;

/**
 * One day's grants in order against the counters: granted when the limit is not 0 and the counter
 * plus the check fits it (the counter then takes the charge); refused otherwise, counted per caller
 * in refusedCalls and refusedMoney (`touched` lists the callers it counted). One plain loop over
 * typed arrays: it runs a million times for a busy month.
 */
function replayDay(a: {
  n: number;
  check: Numbers;
  charge: Numbers;
  money: Numbers;
  key: Numbers | null;
  keyTo: Int32Array;
  caller: Numbers;
  callerTo: Int32Array;
  limits: Float64Array;
  counters: Float64Array;
  refusedCalls: Float64Array;
  refusedMoney: Float64Array;
}): { granted: number; refused: number; money: number; touched: number[] } {
  const { n, check, charge, money, key, keyTo, caller, callerTo, limits, counters, refusedCalls, refusedMoney } = a;
  const touched: number[] = [];
  let granted = 0;
  let refused = 0;
  let refusedTotal = 0;
  for (let i = 0; i < n; i += 1) {
    const k = key === null ? 0 : (keyTo[key[i] ?? 0] ?? 0);
    const lim = limits[k] ?? 0;
    const used = counters[k] ?? 0;
    if (lim !== 0 && used + (check[i] ?? 0) <= lim) {
      counters[k] = used + (charge[i] ?? 0);
      granted += 1;
      continue;
    }
    refused += 1;
    const m = money[i] ?? 0;
    refusedTotal += m;
    const c = callerTo[caller[i] ?? 0] ?? 0;
    if (refusedCalls[c] === 0) touched.push(c);
    refusedCalls[c] = (refusedCalls[c] ?? 0) + 1;
    refusedMoney[c] = (refusedMoney[c] ?? 0) + m;
  }
  return { granted, refused, money: refusedTotal, touched };
}

/** The window a UTC day counts in: the day, or the billing month it falls in. */
function windowOf(q: ReplayQuery, day: string): string {
  if (q.window === "utc_day") return day;
  return utcDay(billingMonthWindow(new Date(`${day}T00:00:00Z`), q.billingDay).start.getTime());
}

/**
 * The counters (scope keys: '' for global, the callers, the destinations) and the callers of every
 * day, numbered once across the days, and each day's own numbering mapped to them.
 */
function scopeKeys(read: DayGrants[], scope: ReplayScope) {
  const callers = new Dictionary();
  const destinations = new Dictionary();
  const callerTo = read.map(({ grants: g }) => callers.indexes(g.callers));
  const keyTo = read.map(({ grants: g }, d) =>
    scope === "caller" ? (callerTo[d] as Int32Array) : scope === "destination" ? destinations.indexes(g.destinations) : new Int32Array(0),
  );
  const names = scope === "global" ? [""] : scope === "caller" ? callers.names : destinations.names;
  return { names, keyTo, callers: callers.names, callerTo };
}

/** Names numbered in the order met, across days whose own numbering differs. */
class Dictionary {
  readonly names: string[] = [];
  private readonly seen = new Map<string, number>();

  /** The index of each of a day's names. */
  indexes(list: string[]): Int32Array {
    return Int32Array.from(list, (name) => indexIn(this.seen, this.names, name));
  }
}

/** What binds each scope key (limitsCte), by the key's index; 0 refuses everything. */
async function limitsOf(db: Db, q: ReplayQuery, names: string[]): Promise<Float64Array> {
  const out = new Float64Array(names.length).fill(q.value);
  if (q.limits === null || q.scope !== "caller" || names.length === 0) return out;
  const rows = resultRows<{ k: string; lim: string }>(
    await db.execute(limitsCte(q, sql`select value as k from jsonb_array_elements_text(${JSON.stringify(names)}::jsonb)`)),
  );
  const at = new Map(names.map((k, i) => [k, i]));
  for (const r of rows) out[at.get(r.k) ?? -1] = Number(r.lim);
  return out;
}

/** The UTC days from `from` to the one `until` falls in, less the skipped ones. */
function daysToRead(q: ReplayQuery, skipped: Map<string, number>): string[] {
  const days: string[] = [];
  for (let at = Math.floor(q.from.getTime() / DAY_MS) * DAY_MS; at < q.until.getTime(); at += DAY_MS) {
    const day = utcDay(at);
    if (!skipped.has(day)) days.push(day);
  }
  return days;
}

/** Counts one reported grant: granted, or refused with its money, on its day and account. */
export function tally(result: ReplayResult, day: string, account: string, refused: boolean, money: number): void {
  const d = result.days.get(day) ?? { granted: 0, refused: 0, refusedMoney: 0 };
  result.days.set(day, d);
  if (!refused) {
    d.granted += 1;
    return;
  }
  d.refused += 1;
  d.refusedMoney += money;
  const accounts = accountsOf(result, day);
  const a = accounts.get(account) ?? { refused: 0, refusedMoney: 0 };
  accounts.set(account, a);
  a.refused += 1;
  a.refusedMoney += money;
}

/** The UTC days that cannot refuse, with their grant counts (see ReplaySkip). */
async function skippableDays(db: Db, q: ReplayQuery): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (q.skip === null || q.window !== "utc_day" || q.value === 0) return out;
  const first = Math.max(q.since.getTime(), ceilDay(q.skip.completeFrom.getTime()));
  const days: string[] = [];
  for (let d = first; d + DAY_MS < q.until.getTime() + 1; d += DAY_MS) days.push(new Date(d).toISOString().slice(0, 10));
  if (days.length === 0) return out;
  const rows = resultRows<{ day: string; grants: string; safe: boolean }>(
    await db.execute(sql`
      with u as (
        select u.scope_key as k, u.window_start, u.held + u.settled as used, u.reservations
        from usage u
        where u.ceiling_id = ${q.skip.ceilingId} and u.window_start >= ${`${days[0]}T00:00:00Z`}::timestamptz
          and u.window_start <= ${`${days[days.length - 1]}T00:00:00Z`}::timestamptz
      )
      select to_char(u.window_start at time zone 'UTC', 'YYYY-MM-DD') as day, sum(u.reservations)::text as grants,
             bool_and(u.used + ${q.skip.maxCheck}::bigint <= l.lim and l.lim > 0) as safe
      from u join (${limitsCte(q, sql`select distinct k from u`)}) l using (k)
      group by u.window_start`),
  );
  const byDay = new Map(rows.map((r) => [r.day, r]));
  for (const day of days) {
    const r = byDay.get(day);
    if (!r)
      out.set(day, 0); // no counter: no grant that day
    else if (r.safe) out.set(day, Number(r.grants));
  }
  return out;
}

const ceilDay = (ms: number) => Math.ceil(ms / DAY_MS) * DAY_MS;

function accountsOf(result: ReplayResult, day: string): Map<string, AccountTotals> {
  const accounts = result.accounts.get(day) ?? new Map<string, AccountTotals>();
  result.accounts.set(day, accounts);
  return accounts;
}
