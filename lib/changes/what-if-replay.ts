import { sql, type SQL } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";

// The replay of a ledger against a value (see what-if.ts for the model). This file holds the fast
// path: one SQL pass decides every grant that can be decided from running sums, and only the
// grants after a window's first refusal that could still fit are replayed one by one, in order.
//
// Why the split is exact: in one counter (scope key, window), every grant before the first refusal
// is granted, so the counter before grant i is the plain running sum of the final charges before
// it. At the first refusal the counter is C; it never goes down afterwards (a refused grant adds
// nothing, a granted one adds its final charge >= 0), so a later grant whose check is above
// value - C is refused whatever happens in between. Only the rest ("undecided") needs the counter.

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

// What each grant is checked with, and what it finally charged (what the counters hold once it
// resolved: resolve_charges' rules, overruns after expiry or release included).
function checkOf(metric: ReplayMetric): SQL {
  if (metric === "calls") return sql`1::bigint`;
  return metric === "money" ? sql`r.money` : sql`r.amount`;
}

function finalOf(metric: ReplayMetric): SQL {
  if (metric === "calls") return sql`(case when r.state = 'released' and r.settled_amount is null then 0 else 1 end)::bigint`;
  if (metric === "money") return finalMoney;
  return sql`(case r.state when 'settled' then r.settled_amount when 'held' then r.amount
               when 'expired' then greatest(r.amount, coalesce(r.settled_amount, 0)) else coalesce(r.settled_amount, 0) end)::bigint`;
}

const finalMoney = sql`(case r.state when 'settled' then r.settled_money when 'held' then r.money
  when 'expired' then greatest(r.money, coalesce(r.settled_money, 0)) else coalesce(r.settled_money, 0) end)::bigint`;

function scopeKeyOf(scope: ReplayScope): SQL {
  if (scope === "global") return sql`''`;
  return scope === "caller" ? sql`r.caller` : sql`coalesce(r.destination_key, '')`;
}

// The window a grant counts in, as window_bounds computes it, inlined: a function call per row
// would cost more than the rest of the pass.
function windowOf(window: ReplayWindow, billingDay: number): SQL {
  const utc = sql`(r.created_at at time zone 'UTC')`;
  if (window === "utc_day") return sql`date_trunc('day', ${utc})`;
  return sql`(date_trunc('month', ${utc}) - case when extract(day from ${utc}) < ${billingDay} then interval '1 month' else interval '0' end
              + make_interval(days => ${billingDay}::int - 1))`;
}

// What binds each scope key: the value, unless the account has its own override or plan value
// (as caller_limit and account_budget_limit say; 0 switches every account off, as a kill does).
function limitsCte(q: ReplayQuery, keys: SQL): SQL {
  const value = sql`${q.value}::bigint`;
  if (q.limits === null || q.scope === "global" || q.scope === "destination") return sql`select s.k, ${value} as lim from (${keys}) s`;
  const defaultPlan = sql`(select d.id from plans d where d.is_default)`;
  if ("ceilingId" in q.limits) {
    const id = q.limits.ceilingId;
    return sql`select s.k, case when ${value} = 0 then 0 else coalesce(o.value, pv.value, ${value}) end as lim
      from (${keys}) s
      left join accounts a on a.account = s.k
      left join ceiling_overrides o on o.ceiling_id = ${id} and o.caller = s.k
      left join plan_ceiling_values pv on pv.ceiling_id = ${id} and pv.plan_id = coalesce(a.plan_id, ${defaultPlan})`;
  }
  const id = q.limits.budgetId;
  return sql`select s.k, case when ${value} = 0 then 0 else coalesce(o.value, pv.value, ${value}) end as lim
    from (${keys}) s
    left join accounts a on a.account = s.k
    left join budget_overrides o on o.budget_id = ${id} and o.caller = s.k
    left join plan_budget_values pv on pv.budget_id = ${id} and pv.plan_id = coalesce(a.plan_id, ${defaultPlan})`;
}

type Row = {
  kind: "day" | "account" | "undecided";
  k: string | null; w: string | null; ck: string | null; lim: string | null; chk: string | null; fin: string | null;
  day: string | null; account: string | null; reported: boolean | null;
  granted: string | null; refused: string | null; money: string | null;
};

/** The fast replay: the days that cannot refuse from the usage rows, one statement over the rest, then the undecided tail in TS. */
export async function replayFast(db: Db, q: ReplayQuery): Promise<ReplayResult> {
  const result: ReplayResult = { days: new Map(), accounts: new Map() };
  const skipped = await skippableDays(db, q);
  for (const [day, granted] of skipped) result.days.set(day, { granted, refused: 0, refusedMoney: 0 });
  const ranges = scanRanges(q, [...skipped.keys()]);
  if (ranges.length === 0) return result;
  const starts = sql.raw(`'{${ranges.map((r) => `"${r.start.toISOString()}"`).join(",")}}'::timestamptz[]`);
  const ends = sql.raw(`'{${ranges.map((r) => `"${r.end.toISOString()}"`).join(",")}}'::timestamptz[]`);
  // Counters are ordered by (created_at, id): reservation ids are time-ordered UUIDs, the tie-break
  // within one microsecond is only needed to make the order total.
  const limited = q.limits !== null && q.scope === "caller";
  const statement = sql`
    with g as (
      select r.id, r.created_at, r.caller as account,
             ${scopeKeyOf(q.scope)} as k, ${windowOf(q.window, q.billingDay)} as w,
             ${checkOf(q.metric)} as chk, ${finalOf(q.metric)} as fin, ${finalMoney} as mon,
             r.created_at >= ${q.since.toISOString()}::timestamptz as reported,
             to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as day
      from unnest(${starts}, ${ends}) as x(s, e)
      join reservations r on r.endpoint_id = any(${sql.raw(`'{${q.endpointIds.map(Number).join(",")}}'::int[]`)})
        and r.created_at >= x.s and r.created_at < x.e
    ),
    run as (
      select g.*, ${limited ? sql`l.lim` : sql`${q.value}::bigint as lim`}, sum(g.fin) over o - g.fin as before
      from g ${limited ? sql`join (${limitsCte(q, sql`select distinct k from g`)}) l using (k)` : sql``}
      window o as (partition by g.k, g.w order by g.created_at, g.id rows unbounded preceding)
    ), crossed as (      -- ck: the counter at the window's first refusal (running sums only grow, so the smallest
      -- "before" among the crossings so far is the first one's); null before it.
      select run.*, min(case when run.lim = 0 or run.before + run.chk > run.lim then run.before end)
               over (partition by run.k, run.w order by run.created_at, run.id rows unbounded preceding) as ck
      from run
    ), fate as (
      select crossed.*,
             case when lim = 0 then 'refused' when ck is null then 'granted'
                  when chk > lim - ck then 'refused' else 'undecided' end as f
      from crossed
    )
    select 'day' as kind, null::text as k, null::text as w, null::text as ck, null::text as lim, null::text as chk, null::text as fin, day,
           null::text as account, null::boolean as reported,
           (count(*) filter (where f = 'granted'))::text as granted, (count(*) filter (where f = 'refused'))::text as refused,
           coalesce(sum(mon) filter (where f = 'refused'), 0)::text as money
    from fate where reported group by day
    union all
    select 'account', null, null, null, null, null, null, day, account, null,
           null, count(*)::text, sum(mon)::text
    from fate where reported and f = 'refused' group by day, account
    union all
    -- One row per counter with undecided grants: their fields packed into one string, in order
    -- (a few hundred thousand rows of a month would cost more to send than to replay). Unit and
    -- record separators: an account holds no control character (reserve refuses them).
    select 'undecided', k, w::text, ck::text, lim::text, null::text, null::text, null::text, null::text, null::boolean,
           null::text, null::text,
           string_agg(concat_ws(chr(31), chk, fin, mon, day, reported::int, account), chr(30) order by created_at, id)
    from fate where f = 'undecided' group by k, w, ck, lim`;
  // The sort of a month of grants fits in memory instead of spilling to disk; compiling the plan
  // (JIT) costs more than the query saves.
  const rows = await db.transaction(async (tx) => {
    await tx.execute(sql`set local work_mem = '128MB'`);
    await tx.execute(sql`set local jit = off`);
    return resultRows<Row>(await tx.execute(statement));
  });
  for (const r of rows) {
    if (r.kind === "day") result.days.set(r.day ?? "", { granted: Number(r.granted), refused: Number(r.refused), refusedMoney: Number(r.money) });
    else if (r.kind === "account") accountsOf(result, r.day ?? "").set(r.account ?? "", { refused: Number(r.refused), refusedMoney: Number(r.money) });
    else replayTail({ ck: Number(r.ck), lim: Number(r.lim), packed: r.money ?? "" }, result);
  }
  return result;
}

// The sequential part: a counter starts at its first refusal's value and takes, in order, the
// grants that could still fit.
function replayTail(c: { ck: number; lim: number; packed: string }, result: ReplayResult): void {
  let counter = c.ck;
  for (const row of c.packed.split("\u001e")) {
    const f = row.split("\u001f");
    const chk = Number(f[0]);
    const refused = counter + chk > c.lim;
    if (!refused) counter += Number(f[1]);
    // The account is last and may be empty (no caller): concat_ws keeps the empty field.
    if (f[4] === "1") tally(result, f[3] ?? "", f.slice(5).join("\u001f"), refused, Number(f[2]));
  }
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
  for (let d = first; d + DAY < q.until.getTime() + 1; d += DAY) days.push(new Date(d).toISOString().slice(0, 10));
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
    if (!r) out.set(day, 0); // no counter: no grant that day
    else if (r.safe) out.set(day, Number(r.grants));
  }
  return out;
}

const DAY = 86_400_000;
const ceilDay = (ms: number) => Math.ceil(ms / DAY) * DAY;

/** [from, until) less the skipped days, as contiguous ranges. */
function scanRanges(q: ReplayQuery, skippedDays: string[]): { start: Date; end: Date }[] {
  const skipped = new Set(skippedDays);
  const ranges: { start: Date; end: Date }[] = [];
  let at = q.from.getTime();
  const until = q.until.getTime();
  while (at < until) {
    const dayStart = Math.floor(at / DAY) * DAY;
    const end = Math.min(dayStart + DAY, until);
    if (!skipped.has(new Date(dayStart).toISOString().slice(0, 10))) {
      const last = ranges[ranges.length - 1];
      if (last && last.end.getTime() === at) last.end = new Date(end);
      else ranges.push({ start: new Date(at), end: new Date(end) });
    }
    at = end;
  }
  return ranges;
}

function accountsOf(result: ReplayResult, day: string): Map<string, AccountTotals> {
  const accounts = result.accounts.get(day) ?? new Map<string, AccountTotals>();
  result.accounts.set(day, accounts);
  return accounts;
}
