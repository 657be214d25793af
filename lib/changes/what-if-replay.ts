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
};

export type DayTotals = { granted: number; refused: number; refusedMoney: number };
export type ReplayResult = { days: Map<string, DayTotals>; accounts: Map<string, { refused: number; refusedMoney: number }> };

/** A grant whose fate depends on the counter: replayed in (counter, created_at, id) order. */
type Undecided = { k: string; w: string; ck: number; lim: number; chk: number; fin: number; mon: number; day: string; account: string; reported: boolean };

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
function limitsCte(q: ReplayQuery): SQL {
  const value = sql`${q.value}::bigint`;
  if (q.limits === null || q.scope === "global" || q.scope === "destination") return sql`select k, ${value} as lim from (select distinct k from g) s`;
  const defaultPlan = sql`(select d.id from plans d where d.is_default)`;
  if ("ceilingId" in q.limits) {
    const id = q.limits.ceilingId;
    return sql`select s.k, case when ${value} = 0 then 0 else coalesce(o.value, pv.value, ${value}) end as lim
      from (select distinct k from g) s
      left join accounts a on a.account = s.k
      left join ceiling_overrides o on o.ceiling_id = ${id} and o.caller = s.k
      left join plan_ceiling_values pv on pv.ceiling_id = ${id} and pv.plan_id = coalesce(a.plan_id, ${defaultPlan})`;
  }
  const id = q.limits.budgetId;
  return sql`select s.k, case when ${value} = 0 then 0 else coalesce(o.value, pv.value, ${value}) end as lim
    from (select distinct k from g) s
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

/** The fast replay: one statement, then the undecided tail in TS. */
export async function replayFast(db: Db, q: ReplayQuery): Promise<ReplayResult> {
  // Counters are ordered by (created_at, id): reservation ids are time-ordered UUIDs, the tie-break
  // within one microsecond is only needed to make the order total.
  const statement = sql`
    with g as materialized (
      select r.id, r.created_at, r.caller as account,
             ${scopeKeyOf(q.scope)} as k, ${windowOf(q.window, q.billingDay)} as w,
             ${checkOf(q.metric)} as chk, ${finalOf(q.metric)} as fin, ${finalMoney} as mon,
             r.created_at >= ${q.since.toISOString()}::timestamptz as reported,
             to_char(r.created_at at time zone 'UTC', 'YYYY-MM-DD') as day
      from reservations r
      where r.endpoint_id = any(${sql.raw(`'{${q.endpointIds.map(Number).join(",")}}'::int[]`)})
        and r.created_at >= ${q.from.toISOString()}::timestamptz and r.created_at < ${q.until.toISOString()}::timestamptz
    ), lims as (${limitsCte(q)}),
    run as (
      select g.*, l.lim, sum(g.fin) over o - g.fin as before
      from g join lims l using (k)
      window o as (partition by g.k, g.w order by g.created_at, g.id rows unbounded preceding)
    ), crossed as (
      -- ck: the counter at the window's first refusal (running sums only grow, so the smallest
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
    select 'account', null, null, null, null, null, null, null, account, null,
           null, count(*)::text, sum(mon)::text
    from fate where reported and f = 'refused' group by account
    union all
    select * from (
      select 'undecided', k, w::text, ck::text, lim::text, chk::text, fin::text, day, account, reported, null::text, null::text, mon::text
      from fate where f = 'undecided' order by k, w, created_at, id
    ) u`;
  const rows = resultRows<Row>(await db.execute(statement));
  const result: ReplayResult = { days: new Map(), accounts: new Map() };
  const undecided: Undecided[] = [];
  for (const r of rows) {
    if (r.kind === "day") result.days.set(r.day!, { granted: Number(r.granted), refused: Number(r.refused), refusedMoney: Number(r.money) });
    else if (r.kind === "account") result.accounts.set(r.account!, { refused: Number(r.refused), refusedMoney: Number(r.money) });
    else
      undecided.push({
        k: r.k!, w: r.w!, ck: Number(r.ck), lim: Number(r.lim), chk: Number(r.chk), fin: Number(r.fin), mon: Number(r.money),
        day: r.day!, account: r.account!, reported: r.reported === true,
      });
  }
  replayTail(undecided, result);
  return result;
}

// The sequential part: each counter starts at its first refusal's value and takes the grants
// that could still fit, in order.
function replayTail(rows: Undecided[], result: ReplayResult): void {
  let counter = 0;
  let current = "";
  for (const r of rows) {
    const key = `${r.k}\u0000${r.w}`;
    if (key !== current) {
      current = key;
      counter = r.ck;
    }
    const refused = counter + r.chk > r.lim;
    if (!refused) counter += r.fin;
    if (r.reported) tally(result, r.day, r.account, refused, r.mon);
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
  const a = result.accounts.get(account) ?? { refused: 0, refusedMoney: 0 };
  result.accounts.set(account, a);
  a.refused += 1;
  a.refusedMoney += money;
}
