import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { Int, NullableInt, parseRows } from "@/lib/spend/source";

// Which budgets stop an endpoint now, for the overview and the endpoint page: a budget killed (its
// value 0 refuses every call on every member, free or not, for every account), or a global budget
// whose open window is used up (every call that costs money is refused until the window ends).
// A per-account budget used up by some accounts stops only them: it is not named here.
// One statement for any number of endpoints, each step served by an index: the memberships by
// endpoint (budget_members_endpoint_idx), the budget by its key, and its one counter in the open
// window by the counters' primary key. No reservation is read.

export type BudgetStop = {
  budgetId: number;
  budget: string;
  currency: string;
  /** killed: switched off until restored; exhausted: settled and held fill the window's value. */
  reason: "killed" | "exhausted";
  killedAt: Date | null;
  killedBy: string | null;
  value: number;
  settled: number;
  held: number;
  /** The open window's end, when an exhausted budget admits calls again (unless held money comes back first). */
  until: Date;
  /** Exhausted only by the worst case of reservations still held: some may settle lower or release. */
  heldMayFree: boolean;
};

const Row = z.object({
  endpoint_id: Int,
  budget_id: Int,
  key: z.string(),
  currency: z.string(),
  scope: z.string(),
  value: Int,
  killed_at: z.coerce.date().nullable(),
  killed_by: z.string().nullable(),
  settled: NullableInt,
  held: NullableInt,
  window_end: z.coerce.date(),
});

export type ReadBudgetStopsParams = { endpointIds: number[]; now: Date };

/** The one statement readBudgetStops runs (exported for the test that reads its plan). */
export function budgetStopsQuery(p: ReadBudgetStopsParams): SQL {
  const ids = sql.join(
    p.endpointIds.map((id) => sql`${id}::int`),
    sql`, `,
  );
  return sql`
      select m.endpoint_id, b.id as budget_id, b.key, b.currency, b.scope::text as scope, b.value, b.killed_at, b.killed_by,
             u.settled, u.held, w.window_end
      from budget_members m
      join budgets b on b.id = m.budget_id and b.archived_at is null
      cross join lateral ceilings.window_bounds(b."window", b.billing_day, 0, ${p.now.toISOString()}::timestamptz) w
      -- Lateral and fenced (offset 0), so the window's start is a key of the lookup, never a filter
      -- over every window the budget ever had; a per-account budget's many counters are not read.
      left join lateral (
        select c.settled, c.held from counters c
        where b.scope = 'global' and c.limit_id = b.limit_id and c.scope_key = '' and c.window_start = w.window_start
        offset 0
      ) u on true
      where m.endpoint_id in (${ids})
        and (b.value = 0 or (b.scope = 'global' and coalesce(u.settled, 0) + coalesce(u.held, 0) >= b.value))
      order by m.endpoint_id, b.value <> 0, b.key`;
}

/** The budgets stopping each endpoint now, by endpoint id (an endpoint stopped by none is absent). */
export async function readBudgetStops(db: Db, p: ReadBudgetStopsParams): Promise<Map<number, BudgetStop[]>> {
  const stops = new Map<number, BudgetStop[]>();
  if (p.endpointIds.length === 0) return stops;
  const rows = parseRows("budget stops", Row, await db.execute(budgetStopsQuery(p)));
  for (const r of rows) {
    const settled = r.settled ?? 0;
    const held = r.held ?? 0;
    const killed = r.value === 0;
    const list = stops.get(r.endpoint_id) ?? [];
    list.push({
      budgetId: r.budget_id,
      budget: r.key,
      currency: r.currency,
      reason: killed ? "killed" : "exhausted",
      killedAt: r.killed_at,
      killedBy: r.killed_by,
      value: r.value,
      settled,
      held,
      until: r.window_end,
      heldMayFree: !killed && settled < r.value && held > 0,
    });
    stops.set(r.endpoint_id, list);
  }
  return stops;
}
