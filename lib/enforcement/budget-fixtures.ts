import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import type { BudgetScope, EndpointPart } from "@/lib/vocabulary";

// Prices and budgets for enforcement tests, written straight to their tables: these tests are
// about what reserve_batch does with them, not about the catalog's rules for making them.

let counter = 0;

/** Sets an endpoint's priced parts: `{ input: 2_500_000, output: 10_000_000 }` in picos a unit. */
export async function priceEndpoint(db: Db, endpointId: number, prices: Record<string, number>): Promise<void> {
  const parts: EndpointPart[] = Object.entries(prices).map(([name, pricePico]) => ({ name, pricePico }));
  await db.execute(sql`update endpoints set parts = ${JSON.stringify(parts)}::jsonb where id = ${endpointId}`);
}

/** A live budget of `value` micros a UTC day over `endpointIds`. */
export async function makeBudget(
  db: Db,
  opts: { endpointIds: number[]; value: number; scope?: BudgetScope; alertThresholds?: number[] },
): Promise<{ id: number; key: string }> {
  counter += 1;
  const key = `t.b${counter}-${Date.now().toString(36)}`;
  const max = Math.max(opts.value, 1) * 10;
  const [row] = resultRows<{ id: number }>(
    await db.execute(sql`
      insert into budgets (key, name, scope, "window", value, min_value, max_value, default_value, alert_thresholds)
      values (${key}, ${key}, ${opts.scope ?? "global"}, 'utc_day', ${opts.value}, 0, ${max}, ${opts.value},
              ${`{${(opts.alertThresholds ?? [50, 80, 100]).join(",")}}`}::smallint[])
      returning id`),
  );
  if (!row) throw new Error("no budget");
  for (const endpointId of opts.endpointIds) {
    await db.execute(sql`insert into budget_members (budget_id, endpoint_id) values (${row.id}, ${endpointId})`);
  }
  return { id: Number(row.id), key };
}

/** Sets a budget's value (0 kills it), the way an edit does: waiting for batches on its members. */
export async function setBudgetValue(db: Db, budgetId: number, value: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select ceilings.lock_endpoints_for_change(array(select endpoint_id from budget_members where budget_id = ${budgetId}))`);
    await tx.execute(sql`update budgets set value = ${value}, max_value = greatest(max_value, ${value}) where id = ${budgetId}`);
  });
}

/** A budget's counter in its current window for one scope ('' for a global budget): held and settled micros. */
export async function budgetUsage(db: Db, budgetId: number, scopeKey = ""): Promise<{ held: number; settled: number }> {
  const [row] = resultRows<{ held: string; settled: string }>(
    await db.execute(sql`select held, settled from budget_usage where budget_id = ${budgetId} and scope_key = ${scopeKey}
                         order by window_start desc limit 1`),
  );
  return { held: Number(row?.held ?? 0), settled: Number(row?.settled ?? 0) };
}
