import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { Int, parseRows } from "@/lib/spend/source";

// The accounts of a per-account budget that spend most: in the open window (each against its own
// value, an override or the budget's) and over a range of windows.
//
// In the open window they are ranked by settled money, the order budget_usage_window_idx
// (budget_id, window_start, settled) keeps: a few index entries at any number of accounts, where
// ranking by held + settled would read every account's row. Held money is shown beside it; it is
// in flight for the length of a call. Over a range of windows an account's settled money is spread
// over many rows: topAccountsOver reads each window's top through the same index and proves its
// answer from them when it can, and sums every row of the range when it cannot.

export type AccountSpend = { account: string; held: number; settled: number; spend: number; value: number };
/** Settled money over a range of windows: held money is in flight, counted only in the open window. */
export type AccountTotal = { account: string; settled: number; windows: number };

const NowRow = z.object({ budget_id: Int, scope_key: z.string(), held: Int, settled: Int, value: Int });

/** The query behind topAccountsNow, unexecuted: the function runs it, the timing test explains it. */
export function topAccountsNowQuery(filter: SQL, now: Date, limit: number): SQL {
  return sql`
    select b.id as budget_id, x.scope_key, x.held, x.settled, l.value
    from budgets b
    cross join lateral ceilings.window_bounds(b."window", b.billing_day, 0, ${now.toISOString()}::timestamptz) w
    cross join lateral (
      select u.scope_key, u.held, u.settled
      from budget_usage u
      where u.budget_id = b.id and u.window_start = w.window_start and u.scope_key <> ''
      order by u.settled desc, u.scope_key
      limit ${limit}
    ) x
    cross join lateral ceilings.account_budget_limit(b.id, x.scope_key) l
    where b.scope = 'account' and ${filter}
    order by b.id, x.settled desc, x.scope_key`;
}

/**
 * The `limit` accounts that settled most in each per-account budget's open window, by budget id,
 * for the budgets `filter` (on `b`) selects, each with what binds it (account_budget_limit: override,
 * plan, own value, kill, block), looked up after the limit, for a few rows.
 */
export async function topAccountsNow(db: Db, filter: SQL, now: Date, limit: number): Promise<Map<number, AccountSpend[]>> {
  const rows = parseRows("budget top accounts now", NowRow, await db.execute(topAccountsNowQuery(filter, now, limit)));
  const byBudget = new Map<number, AccountSpend[]>();
  for (const r of rows) {
    const list = byBudget.get(r.budget_id) ?? [];
    list.push({ account: r.scope_key, held: r.held, settled: r.settled, spend: r.held + r.settled, value: r.value });
    byBudget.set(r.budget_id, list);
  }
  return byBudget;
}

const TotalRow = z.object({ scope_key: z.string(), settled: Int, windows: Int });
const TopRow = z.object({ window_start: z.coerce.date(), scope_key: z.string(), settled: Int });

type RangeParams = { budgetId: number; starts: Date[]; limit: number };

/** Accounts each window's budget_usage_window_idx range yields first when the read proves its answer. */
export const WINDOW_TOP = 40;

function rangeBounds(starts: Date[]): { from: string; through: string } {
  const ms = starts.map((d) => d.getTime());
  return { from: new Date(Math.min(...ms)).toISOString(), through: new Date(Math.max(...ms)).toISOString() };
}

/** Every row of the range, summed per account: exact at any shape, linear in the rows. */
export function topAccountsOverQuery(p: RangeParams): SQL {
  const { from, through } = rangeBounds(p.starts);
  return sql`
    select u.scope_key, sum(u.settled)::bigint as settled, count(*) as windows
    from budget_usage u
    where u.budget_id = ${p.budgetId} and u.window_start >= ${from}::timestamptz
      and u.window_start <= ${through}::timestamptz and u.scope_key <> ''
    group by u.scope_key
    order by settled desc, u.scope_key
    limit ${p.limit}`;
}

/** The WINDOW_TOP accounts that settled most in each window: one short index range per window. */
export function windowTopsQuery(p: RangeParams): SQL {
  const starts = sql.join(
    p.starts.map((d) => sql`${d.toISOString()}::timestamptz`),
    sql`, `,
  );
  return sql`
    select s.ws as window_start, x.scope_key, x.settled
    from unnest(array[${starts}]) as s(ws)
    cross join lateral (
      select u.scope_key, u.settled from budget_usage u
      where u.budget_id = ${p.budgetId} and u.window_start = s.ws and u.scope_key <> ''
      order by u.settled desc
      limit ${WINDOW_TOP}
    ) x`;
}

/**
 * Each candidate's settled money over the whole range: one primary-key range (budget_id,
 * scope_key, window_start) per candidate, driven from the list so the planner never trades them
 * for a scan of the table.
 */
export function candidateTotalsQuery(p: RangeParams, accounts: string[]): SQL {
  const { from, through } = rangeBounds(p.starts);
  const keys = sql.join(
    accounts.map((a) => sql`${a}`),
    sql`, `,
  );
  return sql`
    select c.k as scope_key, t.settled, t.windows
    from unnest(array[${keys}]::text[]) as c(k)
    cross join lateral (
      select coalesce(sum(u.settled), 0)::bigint as settled, count(*) as windows
      from budget_usage u
      where u.budget_id = ${p.budgetId} and u.scope_key = c.k
        and u.window_start >= ${from}::timestamptz and u.window_start <= ${through}::timestamptz
    ) t`;
}

type Seen = { sum: number; windows: Set<number> };

/**
 * From each window's top rows: the most an account outside them all can have settled (`bound`),
 * and the candidates that may still be among the first `limit`. A candidate has at least what was
 * seen of it and at most that plus the WINDOW_TOP-th of each full window it was not seen in; one
 * whose most is below the limit-th largest least is dropped before its total is read.
 */
export function windowTopCandidates(
  tops: { window: number; account: string; settled: number }[],
  limit: number,
): { bound: number; candidates: string[]; provable: boolean } {
  const perWindow = new Map<number, number[]>();
  const seen = new Map<string, Seen>();
  for (const r of tops) {
    perWindow.set(r.window, [...(perWindow.get(r.window) ?? []), r.settled]);
    const s = seen.get(r.account) ?? { sum: 0, windows: new Set<number>() };
    s.sum += r.settled;
    s.windows.add(r.window);
    seen.set(r.account, s);
  }
  // A window that yielded fewer than WINDOW_TOP rows has no account outside them: it adds 0.
  const kth = new Map<number, number>();
  for (const [w, settled] of perWindow) if (settled.length === WINDOW_TOP) kth.set(w, Math.min(...settled));
  const bound = [...kth.values()].reduce((sum, v) => sum + v, 0);
  const least = [...seen.values()].map((s) => s.sum).sort((a, b) => b - a);
  const floor = least[limit - 1] ?? 0;
  const most = [...seen].map(([account, s]) => ({ account, most: s.sum + [...kth].reduce((sum, [w, v]) => (s.windows.has(w) ? sum : sum + v), 0) }));
  // The limit-th total is at most the limit-th largest "most": when that cannot beat the bound,
  // the window tops cannot prove the answer and reading the candidates' totals would be wasted.
  const mostSorted = most.map((m) => m.most).sort((a, b) => b - a);
  const provable = bound === 0 || (mostSorted[limit - 1] ?? 0) > bound;
  return { bound, candidates: most.filter((m) => m.most >= floor).map((m) => m.account), provable };
}

export type TopAccountsOver = {
  accounts: AccountTotal[];
  /** "window tops" when each window's top accounts proved the answer; "every row" when all rows were summed. */
  read: "window tops" | "every row";
};

const byTotal = (a: AccountTotal, b: AccountTotal) => b.settled - a.settled || (a.account < b.account ? -1 : a.account > b.account ? 1 : 0);

/**
 * The `limit` accounts that settled most over the windows starting at `starts` (a threshold
 * read): the WINDOW_TOP accounts of each window, through budget_usage_window_idx, are candidates
 * and get their exact totals; an account outside every window's top settled at most the
 * WINDOW_TOP-th of each window, so when the limit-th candidate is above the sum of those, the
 * answer is exact without reading the other accounts. Otherwise (money spread thin over many
 * accounts) every row of the range is summed.
 */
export async function topAccountsOver(db: Db, p: { budgetId: number; starts: Date[]; limit?: number }): Promise<TopAccountsOver> {
  const params = { budgetId: p.budgetId, starts: p.starts, limit: p.limit ?? 10 };
  if (params.starts.length === 0) return { accounts: [], read: "every row" };
  const tops = parseRows("budget window tops", TopRow, await db.execute(windowTopsQuery(params)));
  const { bound, candidates, provable } = windowTopCandidates(
    tops.map((r) => ({ window: r.window_start.getTime(), account: r.scope_key, settled: r.settled })),
    params.limit,
  );
  if (candidates.length === 0 && bound === 0) return { accounts: [], read: "window tops" };
  if (provable && candidates.length > 0) {
    const totals = parseRows("budget candidate totals", TotalRow, await db.execute(candidateTotalsQuery(params, candidates)))
      .map((r) => ({ account: r.scope_key, settled: r.settled, windows: r.windows }))
      .sort(byTotal);
    const last = totals[params.limit - 1];
    // Exact when no account outside every window's top can reach the limit-th (ties go to every row).
    if (bound === 0 || (last && last.settled > bound)) return { accounts: totals.slice(0, params.limit), read: "window tops" };
  }
  const rows = parseRows("budget top accounts over a range", TotalRow, await db.execute(topAccountsOverQuery(params)));
  return { accounts: rows.map((r) => ({ account: r.scope_key, settled: r.settled, windows: r.windows })), read: "every row" };
}
