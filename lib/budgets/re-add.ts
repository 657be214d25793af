import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import type { Budget } from "@/db/schema";
import type { BudgetSpec } from "./spec";
import { endpointsByKey } from "./write";

// Archiving a budget is instant and one person's (like removing a ceiling); creating a budget is
// too while its value is not above its default. Together they would loosen a budget in two
// one-person steps: archive it, then create another over the same members at a larger value, a
// larger max, per account instead of global, or by the month instead of the day. So a new budget is
// compared with every budget archived in the last 24 hours that shares a member with it (same
// currency): if it lets more money through than any of them (the database decides, with
// ceilings.budget_loosens, on money worst cases), it is a raise. Modelled on lib/catalog/re-add.ts.
// The two steps the other way round (create the looser one beside it, then archive the old one)
// are held by the archive: archiving a budget while a budget created in the last 24 hours over a
// shared member lets more through is a raise too (looserRecentBudget).

export const BUDGET_RE_ADD_WINDOW_HOURS = 24;

/**
 * The archived budget (its key) the new one would loosen, or null. Call it under the members' locks.
 * `retiring`: live budgets about to be archived in the same change (a catalog file), compared as if archived.
 */
export async function loosenedArchivedBudget(db: Db, spec: BudgetSpec, memberIds: readonly number[], retiring: readonly string[] = []): Promise<string | null> {
  if (memberIds.length === 0) return null;
  const killed = spec.killed === true && spec.value > 0;
  const [row] = resultRows<{ key: string }>(
    await db.execute(sql`
      select b.key from budgets b
      where ((b.archived_at is not null and b.archived_at > now() - make_interval(hours => ${BUDGET_RE_ADD_WINDOW_HOURS})
              -- archived by someone (budget.archive), not created archived: one that never limited anything frees nothing
              and exists (select 1 from audit_events a where a.action = 'budget.archive' and a.target = b.key and a.details->>'budgetId' = b.id::text))
             or b.key = any(${`{${retiring.join(",")}}`}::text[]))
        and b.currency = ${spec.currency}
        and exists (select 1 from budget_members m where m.budget_id = b.id and m.endpoint_id = any(${`{${memberIds.join(",")}}`}::int[]))
        and ceilings.budget_loosens(
          b.scope::text, b."window"::text, b.value, b.value_before_kill, b.default_value, b.max_value,
          ${spec.scope}, ${spec.window}, ${killed ? 0 : spec.value}::bigint, ${killed ? spec.value : null}::bigint, ${spec.default}::bigint, ${spec.max}::bigint)
      order by b.archived_at desc nulls first, b.key
      limit 1`),
  );
  return row?.key ?? null;
}

/** The keys of a catalog file's new budgets that loosen a budget archived in the last 24 hours, or one the file archives. */
export async function looserNewBudgets(
  db: Db,
  wanted: readonly BudgetSpec[] | undefined,
  existing: readonly { key: string; archived: boolean }[],
): Promise<Set<string>> {
  const out = new Set<string>();
  if (!wanted) return out;
  const byKey = new Map(existing.map((b) => [b.key, b]));
  const retiring = wanted.filter((w) => w.archived && byKey.get(w.key)?.archived === false).map((w) => w.key);
  for (const spec of wanted) {
    if (byKey.has(spec.key)) continue;
    const ids = [...(await endpointsByKey(db, spec.members)).values()].map((e) => e.id);
    if ((await loosenedArchivedBudget(db, spec, ids, retiring)) !== null) out.add(spec.key);
  }
  return out;
}

/**
 * A live budget created in the last 24 hours, sharing a member (and the currency) with `budget`,
 * that lets more money through than it: archiving `budget` would leave that one in its place.
 * Its key, or null. Call it under the members' locks.
 */
export async function looserRecentBudget(db: Db, budget: Pick<Budget, "id" | "currency">): Promise<string | null> {
  const [row] = resultRows<{ key: string }>(
    await db.execute(sql`
      select c.key from budgets b, budgets c
      where b.id = ${budget.id}
        and c.id <> b.id
        and c.archived_at is null
        and c.created_at > now() - make_interval(hours => ${BUDGET_RE_ADD_WINDOW_HOURS})
        and c.currency = ${budget.currency}
        and exists (select 1 from budget_members mb join budget_members mc on mc.endpoint_id = mb.endpoint_id where mb.budget_id = b.id and mc.budget_id = c.id)
        and ceilings.budget_loosens(
          b.scope::text, b."window"::text, b.value, b.value_before_kill, b.default_value, b.max_value,
          c.scope::text, c."window"::text, c.value, c.value_before_kill, c.default_value, c.max_value)
      order by c.created_at desc, c.key
      limit 1`),
  );
  return row?.key ?? null;
}
