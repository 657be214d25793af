import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { insertBudget } from "@/lib/budgets/read-fixtures";
import type { BudgetScope, EndpointPart } from "@/lib/vocabulary";

// Prices and budgets for enforcement tests, written straight to their tables: these tests are
// about what reserve_batch does with them, not about the catalog's rules for making them.

/** Sets an endpoint's priced parts: `{ input: 2_500_000, output: 10_000_000 }` in picos a unit. */
export async function priceEndpoint(db: Db, endpointId: number, prices: Record<string, number>): Promise<void> {
  const parts: EndpointPart[] = Object.entries(prices).map(([name, pricePico]) => ({ name, pricePico }));
  await db.execute(sql`update endpoints set parts = ${JSON.stringify(parts)}::jsonb where id = ${endpointId}`);
}

/** A live budget of `value` micros a UTC day over `endpointIds` (bounds 0 to ten times the value). */
export function makeBudget(
  db: Db,
  opts: { endpointIds: number[]; value: number; scope?: BudgetScope; alertThresholds?: number[] },
): Promise<{ id: number; key: string }> {
  return insertBudget(db, {
    members: opts.endpointIds,
    scope: opts.scope ?? "global",
    value: opts.value,
    defaultValue: opts.value,
    maxValue: Math.max(opts.value, 1) * 10,
    ...(opts.alertThresholds ? { alertThresholds: opts.alertThresholds } : {}),
  });
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
