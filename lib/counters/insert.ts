import { inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings, counters } from "@/db/schema";

type CounterValues = { scopeKey: string; windowStart: Date; windowEnd: Date; held?: number; settled?: number; reservations?: number };
/** A ceiling's counter named by the ceiling, as the demo, the fill and tests know it. */
export type CeilingCounterRow = { ceilingId: number } & CounterValues;
/** A budget's counter named by the budget. */
export type BudgetCounterRow = { budgetId: number } & CounterValues;
export type CounterRow = CeilingCounterRow | BudgetCounterRow;

/**
 * Writes counters named by their ceiling or budget into the one counters table, keyed by each one's
 * limit. For history and fixtures: reservations charge counters through reserve_batch.
 */
export async function insertCounters(db: Db, input: CounterRow | CounterRow[]): Promise<void> {
  const rows = Array.isArray(input) ? input : [input];
  if (rows.length === 0) return;
  const ceilingIds = [...new Set(rows.flatMap((r) => ("ceilingId" in r ? [r.ceilingId] : [])))];
  const budgetIds = [...new Set(rows.flatMap((r) => ("budgetId" in r ? [r.budgetId] : [])))];
  const ceilingLimits = new Map(
    ceilingIds.length === 0
      ? []
      : (await db.select({ id: ceilings.id, limitId: ceilings.limitId }).from(ceilings).where(inArray(ceilings.id, ceilingIds))).map((c) => [c.id, c.limitId]),
  );
  const budgetLimits = new Map(
    budgetIds.length === 0
      ? []
      : (await db.select({ id: budgets.id, limitId: budgets.limitId }).from(budgets).where(inArray(budgets.id, budgetIds))).map((b) => [b.id, b.limitId]),
  );
  const values = rows.map(({ held, settled, reservations, scopeKey, windowStart, windowEnd, ...owner }) => {
    const limitId = "ceilingId" in owner ? ceilingLimits.get(owner.ceilingId) : budgetLimits.get(owner.budgetId);
    if (limitId === undefined) throw new Error(`no limit for counter of ${JSON.stringify(owner)}`);
    return { limitId, scopeKey, windowStart, windowEnd, held, settled, reservations };
  });
  for (let i = 0; i < values.length; i += 5000) await db.insert(counters).values(values.slice(i, i + 5000));
}
