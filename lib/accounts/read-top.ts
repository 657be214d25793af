import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { topAccountsNow, topAccountsOver, WINDOW_TOP, windowsBack } from "@/lib/budgets";
import { windowTopCandidates } from "@/lib/budgets/read-accounts";
import { windowFor, type WindowSpan } from "@/lib/limits/windows";
import { Int, parseRows } from "@/lib/spend/source";
import { BUDGET_WINDOWS, CEILING_METRICS, CEILING_WINDOWS, type BudgetWindow, type CeilingMetric, type CeilingWindow } from "@/lib/vocabulary";
import { LimitSourceColumn, thirtyDaysFrom, type Binding } from "./read-binding";

// The accounts that spend most on one per-caller ceiling (an endpoint's counter per account) or
// one per-account budget: in the open window, each with what binds it, and over the last 30 days.
// Budgets are read by lib/budgets (topAccountsNow, topAccountsOver); ceilings here, the same way:
// ranked by settled (held is money in flight for the length of a call, shown beside it).

export type TopTarget =
  | { kind: "ceiling"; id: number; endpointKey: string; metric: CeilingMetric; window: CeilingWindow; unit: string; billingDay: number }
  | { kind: "budget"; id: number; key: string; name: string; window: BudgetWindow; currency: string; billingDay: number };

/** How a target is named in a link (`?top=ceiling-12`, `?top=budget-llm.daily`). */
export function topTargetParam(t: TopTarget): string {
  return t.kind === "ceiling" ? `ceiling-${t.id}` : `budget-${t.key}`;
}

export type TopAccountNow = { account: string; held: number; settled: number; planKey: string | null; binding: Binding };
export type TopAccountOver = { account: string; settled: number; windows: number };
/**
 * How the 30 days were ranked: proved from the totals the worker keeps (ceilingTopFromTotals), from
 * each window's top accounts, by summing every row, or
 * (when the proof fails and summing every row was not asked for) among each window's top accounts
 * only, where an account outside every window's top may have settled up to `bound`.
 */
export type OverRead = { read: "kept totals" | "window tops" | "every row" } | { read: "unproved"; bound: number };
export type TopAccounts = { target: TopTarget; span: WindowSpan; now: TopAccountNow[]; over30: TopAccountOver[]; over30Read: OverRead; since: Date };

const TargetRow = z.object({
  kind: z.enum(["ceiling", "budget"]),
  id: Int,
  key: z.string(),
  name: z.string(),
  metric: z.enum(CEILING_METRICS).nullable(),
  window: z.enum(CEILING_WINDOWS),
  unit: z.string(),
  billing_day: Int,
});

/** Every per-caller ceiling (of a live endpoint) and every live per-account budget, endpoints first. */
export async function listTopTargets(db: Db): Promise<TopTarget[]> {
  const rows = parseRows(
    "top account targets",
    TargetRow,
    await db.execute(sql`
      select 'ceiling' as kind, c.id, e.key, e.name, c.metric::text as metric, c."window"::text as "window", e.unit, e.billing_day
      from ceilings c join endpoints e on e.id = c.endpoint_id
      where c.scope = 'caller' and e.archived_at is null
      union all
      select 'budget', b.id, b.key, b.name, null, b."window"::text, b.currency, b.billing_day
      from budgets b where b.scope = 'account' and b.archived_at is null
      order by 1 desc, 3, 2`),
  );
  const out: TopTarget[] = [];
  for (const r of rows) {
    if (r.kind === "ceiling" && r.metric)
      out.push({ kind: "ceiling", id: r.id, endpointKey: r.key, metric: r.metric, window: r.window, unit: r.unit, billingDay: r.billing_day });
    const budgetWindow = BUDGET_WINDOWS.find((w) => w === r.window);
    if (r.kind === "budget" && budgetWindow)
      out.push({ kind: "budget", id: r.id, key: r.key, name: r.name, window: budgetWindow, currency: r.unit, billingDay: r.billing_day });
  }
  return out;
}

const BindingRow = z.object({ account: z.string(), plan_key: z.string().nullable(), value: Int, source: LimitSourceColumn });

/** What binds each of a few accounts on one ceiling or budget, as enforcement decides it (caller_limit, account_budget_limit). */
async function bindingsFor(db: Db, target: TopTarget, accounts: string[]): Promise<Map<string, { planKey: string | null; binding: Binding }>> {
  const out = new Map<string, { planKey: string | null; binding: Binding }>();
  if (accounts.length === 0) return out;
  const list = sql`array[${sql.join(
    accounts.map((a) => sql`${a}`),
    sql`, `,
  )}]::text[]`;
  const limit = target.kind === "ceiling" ? sql`ceilings.caller_limit(${target.id}, k.account)` : sql`ceilings.account_budget_limit(${target.id}, k.account)`;
  const rows = parseRows(
    "top account bindings",
    BindingRow,
    await db.execute(sql`
      select k.account, p.key as plan_key, l.value, l.source
      from unnest(${list}) as k(account)
      cross join lateral ${limit} l
      left join accounts a on a.account = k.account
      left join plans p on p.id = coalesce(a.plan_id, (select d.id from plans d where d.is_default))`),
  );
  for (const r of rows) out.set(r.account, { planKey: r.plan_key, binding: { value: r.value, source: r.source } });
  return out;
}

const NowRow = z.object({ scope_key: z.string(), held: Int, settled: Int });
const OverRow = z.object({ scope_key: z.string(), settled: z.coerce.number(), windows: Int });
const CeilingState = z.object({ value: Int });

/**
 * The query behind a ceiling's top accounts in its open window. usage's primary key leads with
 * (ceiling_id, scope_key): the open window's rows are found inside the ceiling's whole range, so
 * the cost grows with the ceiling's history; an index on (ceiling_id, window_start, settled), as
 * budget_usage_window_idx is for budgets, would make it a few entries.
 */
export function ceilingTopNowQuery(ceilingId: number, windowStart: Date, limit: number) {
  return sql`
    select x.scope_key, x.held, x.settled from usage x
    where x.ceiling_id = ${ceilingId} and x.window_start = ${windowStart.toISOString()}::timestamptz and x.scope_key <> ''
    order by x.settled desc, x.scope_key
    limit ${limit}`;
}

/** Settled units per account over windows starting in [from, through], summed over every row of the range. */
export function ceilingTopOverQuery(ceilingId: number, from: Date, through: Date, limit: number) {
  return sql`
    select x.scope_key, sum(x.settled)::numeric as settled, count(*) as windows from usage x
    where x.ceiling_id = ${ceilingId} and x.window_start >= ${from.toISOString()}::timestamptz
      and x.window_start <= ${through.toISOString()}::timestamptz and x.scope_key <> ''
    group by x.scope_key
    order by settled desc, x.scope_key
    limit ${limit}`;
}

const timestamps = (starts: Date[]) =>
  sql`array[${sql.join(
    starts.map((d) => sql`${d.toISOString()}::timestamptz`),
    sql`, `,
  )}]`;

/** The WINDOW_TOP accounts that settled most in each window: one short range per window once usage is indexed by (ceiling, window, settled). */
export function ceilingWindowTopsQuery(ceilingId: number, starts: Date[]) {
  return sql`
    select s.ws as window_start, x.scope_key, x.settled
    from unnest(${timestamps(starts)}) as s(ws)
    cross join lateral (
      select u.scope_key, u.settled from usage u
      where u.ceiling_id = ${ceilingId} and u.window_start = s.ws and u.scope_key <> ''
      order by u.settled desc
      limit ${WINDOW_TOP}
    ) x`;
}

/** Each candidate's settled units over the range: one primary-key range (ceiling_id, scope_key, window_start) each. */
function ceilingCandidateTotalsQuery(ceilingId: number, from: Date, through: Date, accounts: string[]) {
  return sql`
    select c.k as scope_key, t.settled, t.windows
    from unnest(array[${sql.join(
      accounts.map((a) => sql`${a}`),
      sql`, `,
    )}]::text[]) as c(k)
    cross join lateral (
      select coalesce(sum(u.settled), 0)::numeric as settled, count(*) as windows from usage u
      where u.ceiling_id = ${ceilingId} and u.scope_key = c.k
        and u.window_start >= ${from.toISOString()}::timestamptz and u.window_start <= ${through.toISOString()}::timestamptz
    ) t`;
}

const TopRow = z.object({ window_start: z.coerce.date(), scope_key: z.string(), settled: Int });
const byTotal = (a: TopAccountOver, b: TopAccountOver) => b.settled - a.settled || (a.account < b.account ? -1 : a.account > b.account ? 1 : 0);
/** Candidates' exact totals over windows starting in [first, last], highest first; an account with no window there is none. */
async function candidateTotals(db: Db, ceilingId: number, first: Date, last: Date, accounts: string[]): Promise<TopAccountOver[]> {
  if (accounts.length === 0) return [];
  return parseRows("ceiling candidate totals", OverRow, await db.execute(ceilingCandidateTotalsQuery(ceilingId, first, last, accounts)))
    .filter((r) => r.windows > 0)
    .map((r) => ({ account: r.scope_key, settled: r.settled, windows: r.windows }))
    .sort(byTotal);
}

/** Accounts per row of the limit whose exact totals an unproved ranking reads. */
const UNPROVED_READ = 5;
// A kept total sums up to 30 windows: past 2^53 it is read as the nearest double, never refused.
const ListRow = z.object({ list: Int, scope_key: z.string(), settled: z.coerce.number() });
const KeptRange = z.object({ from_start: z.coerce.date(), through_start: z.coerce.date() });
/** Accounts read from the top of each list first, and at most (growing 4 times a round while the bound is not beaten). */
const KEPT_FIRST = 40;
const KEPT_MOST = 2_560;

/**
 * A ceiling's top accounts over windows starting in [first, last] from the totals the worker keeps
 * (lib/counters/caller-totals.ts) and the windows after them, with the threshold algorithm: the
 * first k accounts of the kept totals and of each later window are candidates, and an account
 * outside them all has settled at most the sum of each list's k-th (its kept total counts every
 * window it holds, and windows before `first` only add). The candidates' exact totals are read from
 * their counters; the answer stands when the limit-th beats that bound, else k grows, up to
 * KEPT_MOST: past it (ties deeper than that) the likeliest candidates' exact totals come back
 * unproved, with the bound. Null when no kept totals cover the range's start.
 * One snapshot throughout: the kept totals and the counters are read as of one instant.
 */
export async function ceilingTopFromTotals(
  db: Db,
  p: { ceilingId: number; starts: Date[]; limit: number },
): Promise<({ accounts: TopAccountOver[] } & OverRead) | null> {
  const first = p.starts[0];
  const last = p.starts.at(-1);
  if (!first || !last) return { accounts: [], read: "kept totals" };
  return db.transaction(
    async (tx) => {
      const [kept] = parseRows(
        "caller totals range",
        KeptRange,
        await tx.execute(sql`select s.from_start, s.through_start from caller_totals_state s where s.ceiling_id = ${p.ceilingId}`),
      );
      if (!kept || kept.from_start > first || kept.through_start <= first) return null;
      // Windows the totals do not hold yet (the open one, any closed since the last build), as the
      // counters have them: every row the candidates' totals count is then in the totals or in a
      // list, even after the endpoint's billing day moved its months. A skip scan of
      // usage_ceiling_window_settled_idx: one index probe per window.
      const after = parseRows(
        "caller totals windows after",
        z.object({ ws: z.coerce.date() }),
        await tx.execute(sql`
          with recursive w(ws) as (
            select (select min(u.window_start) from usage u where u.ceiling_id = ${p.ceilingId} and u.window_start >= ${kept.through_start.toISOString()}::timestamptz)
            union all
            select (select min(u.window_start) from usage u where u.ceiling_id = ${p.ceilingId} and u.window_start > w.ws)
            from w where w.ws is not null and w.ws <= ${last.toISOString()}::timestamptz)
          select ws from w where ws is not null and ws <= ${last.toISOString()}::timestamptz`),
      ).map((r) => r.ws);
      const totalsOf = (accounts: string[]) => candidateTotals(tx, p.ceilingId, first, last, accounts);
      for (let k = KEPT_FIRST; ; k *= 4) {
        const lists = parseRows(
          "caller totals lists",
          ListRow,
          await tx.execute(sql`
            select -1 as list, t.scope_key, t.settled from (
              select k.scope_key, k.settled from caller_totals k
              where k.ceiling_id = ${p.ceilingId}
              order by k.settled desc nulls last, k.scope_key
              limit ${k}) t
            ${
              after.length > 0
                ? sql`union all
            select s.i::int as list, x.scope_key, x.settled
            from unnest(${timestamps(after)}) with ordinality as s(ws, i)
            cross join lateral (
              select u.scope_key, u.settled from usage u
              where u.ceiling_id = ${p.ceilingId} and u.window_start = s.ws and u.scope_key <> ''
              order by u.settled desc
              limit ${k}
            ) x`
                : sql``
            }`),
        );
        const byList = new Map<number, number[]>();
        for (const r of lists) {
          const list = byList.get(r.list) ?? [];
          list.push(r.settled);
          byList.set(r.list, list);
        }
        // Each list's k-th, the most an account outside its first k has in it; a list shorter than
        // k holds every account it has, and adds nothing to one outside it.
        const kth = new Map([...byList].map(([list, v]) => [list, v.length === k ? Math.min(...v) : 0]));
        const bound = [...kth.values()].reduce((sum, v) => sum + v, 0);
        const exhausted = [...byList.values()].every((v) => v.length < k);
        // A candidate has at most what was seen of it plus each other list's k-th. When the
        // limit-th of those cannot beat the bound, no total read now could: read further first.
        const most = new Map<string, number>();
        for (const r of lists) most.set(r.scope_key, (most.get(r.scope_key) ?? bound) + r.settled - (kth.get(r.list) ?? 0));
        const byMost = [...most].sort((a, b) => b[1] - a[1]);
        const final = k * 4 > KEPT_MOST;
        if (exhausted || (byMost[p.limit - 1]?.[1] ?? 0) > bound) {
          const totals = await totalsOf([...most.keys()]);
          const limitTh = totals[p.limit - 1];
          if (exhausted || (limitTh && limitTh.settled > bound)) return { accounts: totals.slice(0, p.limit), read: "kept totals" };
          if (final) return { accounts: totals.slice(0, p.limit), read: "unproved", bound };
        } else if (final) {
          // Unproved (ties deeper than any list read): the exact totals of the likeliest few.
          const likely = byMost.slice(0, p.limit * UNPROVED_READ).map(([account]) => account);
          return { accounts: (await totalsOf(likely)).slice(0, p.limit), read: "unproved", bound };
        }
      }
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}

/**
 * A ceiling's top accounts over a range of windows: from the totals the worker keeps when they
 * cover the range (ceilingTopFromTotals); else as lib/budgets' topAccountsOver reads a
 * budget's (and with its proof, windowTopCandidates): each window's WINDOW_TOP accounts are
 * candidates with exact totals, and the answer stands when no account outside every window's top
 * can reach the limit-th; otherwise every row of the range is summed, which reads every counter
 * of the range (390,000 rows, over half a second, when 10,000 accounts a day each spend a little):
 * with `exhaustive` false it is not, and the candidates' exact totals come back unproved, with the
 * most an account outside them could have settled.
 */
export async function ceilingTopOver(
  db: Db,
  p: { ceilingId: number; starts: Date[]; limit: number; exhaustive?: boolean },
): Promise<{ accounts: TopAccountOver[] } & OverRead> {
  const first = p.starts[0];
  const last = p.starts.at(-1);
  if (!first || !last) return { accounts: [], read: "every row" };
  const everyRow = async () =>
    parseRows("ceiling top accounts over a range", OverRow, await db.execute(ceilingTopOverQuery(p.ceilingId, first, last, p.limit))).map((r) => ({
      account: r.scope_key,
      settled: r.settled,
      windows: r.windows,
    }));
  // Kept totals that cannot prove the ranking leave nothing for the window tops to prove.
  const kept = await ceilingTopFromTotals(db, p);
  if (kept && (kept.read !== "unproved" || p.exhaustive === false)) return kept;
  if (kept) return { accounts: await everyRow(), read: "every row" };
  const tops = parseRows("ceiling window tops", TopRow, await db.execute(ceilingWindowTopsQuery(p.ceilingId, p.starts)));
  const { bound, candidates, provable } = windowTopCandidates(
    tops.map((r) => ({ window: r.window_start.getTime(), account: r.scope_key, settled: r.settled })),
    p.limit,
  );
  if (candidates.length === 0 && bound === 0) return { accounts: [], read: "window tops" };
  const totalsOf = (accounts: string[]) => candidateTotals(db, p.ceilingId, first, last, accounts);
  if (provable && candidates.length > 0) {
    const totals = await totalsOf(candidates);
    const limitTh = totals[p.limit - 1];
    if (bound === 0 || (limitTh && limitTh.settled > bound)) return { accounts: totals.slice(0, p.limit), read: "window tops" };
  }
  if (p.exhaustive === false && candidates.length > 0) {
    // Unproved either way: the exact totals of the accounts seen most in the windows' tops (a
    // few times the limit), not of every candidate, which is each window's top when spend is spread thin.
    const seen = new Map<string, number>();
    for (const r of tops) seen.set(r.scope_key, (seen.get(r.scope_key) ?? 0) + r.settled);
    const likely = [...seen]
      .sort((a, b) => b[1] - a[1])
      .slice(0, p.limit * UNPROVED_READ)
      .map(([account]) => account);
    return { accounts: (await totalsOf(likely)).slice(0, p.limit), read: "unproved", bound };
  }
  return { accounts: await everyRow(), read: "every row" };
}

type TopParams = { now: Date; limit: number; exhaustive: boolean };

async function ceilingTop(
  db: Db,
  target: Extract<TopTarget, { kind: "ceiling" }>,
  { now, limit, exhaustive }: TopParams,
): Promise<Omit<TopAccounts, "target" | "since">> {
  const span = windowFor(target.window, { billingDay: target.billingDay }, now);
  const starts = windowsBack({ window: target.window === "billing_month" ? "billing_month" : "utc_day", billingDay: target.billingDay }, now, 30).map(
    (w) => w.start,
  );
  const [state] = parseRows("top account ceiling", CeilingState, await db.execute(sql`select c.value from ceilings c where c.id = ${target.id}`));
  const [nowRows, overRows] = await Promise.all([
    db.execute(ceilingTopNowQuery(target.id, span.start, limit)).then((r) => parseRows("ceiling top accounts now", NowRow, r)),
    ceilingTopOver(db, { ceilingId: target.id, starts, limit, exhaustive }),
  ]);
  const bindings = await bindingsFor(
    db,
    target,
    nowRows.map((r) => r.scope_key),
  );
  return {
    span,
    now: nowRows.map((r) => ({
      account: r.scope_key,
      held: r.held,
      settled: r.settled,
      planKey: bindings.get(r.scope_key)?.planKey ?? null,
      binding: bindings.get(r.scope_key)?.binding ?? { value: state?.value ?? 0, source: "ceiling" },
    })),
    over30: overRows.accounts,
    over30Read: overRows.read === "unproved" ? { read: "unproved", bound: overRows.bound } : { read: overRows.read },
  };
}

async function budgetTop(db: Db, target: Extract<TopTarget, { kind: "budget" }>, { now, limit }: TopParams): Promise<Omit<TopAccounts, "target" | "since">> {
  const span = windowFor(target.window, { billingDay: target.billingDay }, now);
  const starts = windowsBack(target, now, 30).map((w) => w.start);
  const [byBudget, over] = await Promise.all([
    topAccountsNow(db, sql`b.id = ${target.id}`, now, limit),
    topAccountsOver(db, { budgetId: target.id, starts, limit }),
  ]);
  const rows = byBudget.get(target.id) ?? [];
  // topAccountsNow gives what binds each (account_budget_limit) without its source; the source and plan are read here.
  const bindings = await bindingsFor(
    db,
    target,
    rows.map((r) => r.account),
  );
  return {
    span,
    now: rows.map((r) => ({
      account: r.account,
      held: r.held,
      settled: r.settled,
      planKey: bindings.get(r.account)?.planKey ?? null,
      binding: bindings.get(r.account)?.binding ?? { value: r.value, source: "ceiling" },
    })),
    over30: over.accounts.map((a) => ({ account: a.account, settled: a.settled, windows: a.windows })),
    // lib/budgets' read always answers exactly (it sums every row when its proof fails).
    over30Read: { read: over.read },
  };
}

/**
 * The `limit` accounts that settled most on `target` in its open window (with what binds each) and
 * over the last 30 days. `exhaustive`: sum every row of the 30 days when each window's top accounts
 * cannot prove a ceiling's ranking (slow when many accounts each spend a little); by default the
 * ranking among them is returned, marked unproved.
 */
export async function topAccounts(db: Db, p: { target: TopTarget; now: Date; limit?: number; exhaustive?: boolean }): Promise<TopAccounts> {
  const params = { now: p.now, limit: p.limit ?? 10, exhaustive: p.exhaustive ?? false };
  const read = p.target.kind === "ceiling" ? await ceilingTop(db, p.target, params) : await budgetTop(db, p.target, params);
  return { target: p.target, since: thirtyDaysFrom(p.now), ...read };
}

export type PlanOption = { key: string; name: string; isDefault: boolean };

/** The plans an admin may move an account to, the default first. */
export async function listPlanOptions(db: Db): Promise<PlanOption[]> {
  const rows = parseRows(
    "plan options",
    z.object({ key: z.string(), name: z.string(), is_default: z.boolean() }),
    await db.execute(sql`select key, name, is_default from plans order by is_default desc, key`),
  );
  return rows.map((r) => ({ key: r.key, name: r.name, isDefault: r.is_default }));
}
