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
// in flight for the length of a call. Over a range of windows an account's total is spread over
// many rows, so that read aggregates every row in the range (exact, linear in the rows).

export type AccountSpend = { account: string; held: number; settled: number; spend: number; value: number };
export type AccountTotal = { account: string; spend: number; windows: number };

const NowRow = z.object({ budget_id: Int, scope_key: z.string(), held: Int, settled: Int, value: Int });

/** The query behind topAccountsNow, unexecuted: the function runs it, the timing test explains it. */
export function topAccountsNowQuery(filter: SQL, now: Date, limit: number): SQL {
  return sql`
    select b.id as budget_id, x.scope_key, x.held, x.settled, coalesce(o.value, b.value) as value
    from budgets b
    cross join lateral ceilings.window_bounds(b."window", b.billing_day, 0, ${now.toISOString()}::timestamptz) w
    cross join lateral (
      select u.scope_key, u.held, u.settled
      from budget_usage u
      where u.budget_id = b.id and u.window_start = w.window_start and u.scope_key <> ''
      order by u.settled desc, u.scope_key
      limit ${limit}
    ) x
    left join budget_overrides o on o.budget_id = b.id and o.caller = x.scope_key
    where b.scope = 'account' and ${filter}
    order by b.id, x.settled desc, x.scope_key`;
}

/**
 * The `limit` accounts that settled most in each per-account budget's open window, by budget id,
 * for the budgets `filter` (on `b`) selects. The override is looked up after the limit, for a few rows.
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

const TotalRow = z.object({ scope_key: z.string(), spend: Int, windows: Int });

/** The query behind topAccountsOver, unexecuted: the function runs it, the timing test explains it. */
export function topAccountsOverQuery(p: { budgetId: number; from: Date; through: Date; limit: number }): SQL {
  return sql`
    select u.scope_key, sum(u.held + u.settled)::bigint as spend, count(*) as windows
    from budget_usage u
    where u.budget_id = ${p.budgetId} and u.window_start >= ${p.from.toISOString()}::timestamptz
      and u.window_start <= ${p.through.toISOString()}::timestamptz and u.scope_key <> ''
    group by u.scope_key
    order by spend desc, u.scope_key
    limit ${p.limit}`;
}

/** The `limit` accounts that spent most in the windows starting from `from` through `through` (the open one). */
export async function topAccountsOver(db: Db, p: { budgetId: number; from: Date; through: Date; limit?: number }): Promise<AccountTotal[]> {
  const rows = parseRows("budget top accounts over a range", TotalRow, await db.execute(topAccountsOverQuery({ ...p, limit: p.limit ?? 10 })));
  return rows.map((r) => ({ account: r.scope_key, spend: r.spend, windows: r.windows }));
}
