import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

// A per-account budget at scale for bench:dashboard: `accounts` accounts over the last 90 UTC days,
// each settling once (account i on day i % 90), plus 20 big accounts that spend every day, the
// shape most bills have. Made once: a budget that exists already is left as it is.

export const FILL_BUDGET = "fill.per-account";

export async function fillBudget(db: Db, accounts: number): Promise<number> {
  const [found] = resultRows<{ id: number }>(await db.execute(sql`select id from budgets where key = ${FILL_BUDGET}`));
  if (found) return 0;
  const [budget] = resultRows<{ id: number; limit_id: number }>(
    await db.execute(sql`
      insert into budgets (key, name, scope, "window", value, min_value, max_value, default_value)
      values (${FILL_BUDGET}, 'Filled per-account budget', 'account', 'utc_day', 1000000000, 0, 10000000000, 1000000000)
      returning id, limit_id`),
  );
  if (!budget) throw new Error("no budget");
  await db.execute(sql`insert into budget_members (budget_id, endpoint_id) select ${budget.id}, id from endpoints order by id limit 3`);
  const today = sql`date_trunc('day', now() at time zone 'UTC') at time zone 'UTC'`;
  await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
    select ${budget.limit_id}, 'acct-' || i, ${today} - (i % 90) * interval '1 day', ${today} - (i % 90 - 1) * interval '1 day', 0, i, 1
    from generate_series(1, ${accounts}::int) i`);
  await db.execute(sql`
    insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
    select ${budget.limit_id}, 'big-' || k, ${today} - d * interval '1 day', ${today} - (d - 1) * interval '1 day', 0, 1000000 + k, 1
    from generate_series(1, 20) k, generate_series(0, 89) d`);
  await db.execute(sql`analyze counters`);
  return accounts + 20;
}
