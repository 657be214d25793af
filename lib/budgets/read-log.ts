import { and, desc, eq, like, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { alerts, auditEvents, refusals, type Alert, type AuditEvent } from "@/db/schema";
import { countOverrides, listOverrides, type OverrideRow } from "@/lib/limits/overrides";
import type { KeysetCursor } from "@/lib/keyset";
import { refusalColumns, type RefusalRow } from "@/lib/refusals/list";
import { cursorCondition } from "@/lib/refusals/where";

// What happened to a budget: its adjustments (the audit log's budget.* events that target it), the
// refusals it made, its alerts and its per-account overrides.

export const BUDGET_LOG_LIMIT = 20;

/** The latest budget.* audit events whose target is the budget's key, newest first. */
export async function listBudgetAdjustments(db: Db, p: { key: string; limit?: number }): Promise<AuditEvent[]> {
  return db
    .select()
    .from(auditEvents)
    .where(and(like(auditEvents.action, "budget.%"), eq(auditEvents.target, p.key)))
    .orderBy(sql`${auditEvents.at} desc nulls last`, sql`${auditEvents.id} desc nulls last`)
    .limit(p.limit ?? BUDGET_LOG_LIMIT);
}

export type BudgetRefusalPage = {
  rows: RefusalRow[];
  /** Cursor of the page of older refusals, or null when there are none. */
  older: string | null;
};

/**
 * The refusals a budget made, newest first, keyset-paged on (at, id) like the refusal log: a page
 * deep in the log costs what the first does. gate = 'budget' lets refusals_gate_at_idx walk only
 * budget refusals in order.
 */
export async function listBudgetRefusals(db: Db, p: { budgetId: number; before?: KeysetCursor; limit?: number }): Promise<BudgetRefusalPage> {
  const limit = p.limit ?? BUDGET_LOG_LIMIT;
  const where = [eq(refusals.gate, "budget"), eq(refusals.budgetId, p.budgetId)];
  if (p.before) where.push(cursorCondition(p.before, "older"));
  const rows = await db
    .select(refusalColumns)
    .from(refusals)
    .where(and(...where))
    .orderBy(sql`${refusals.at} desc nulls last`, sql`${refusals.id} desc nulls last`)
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  return { rows: page, older: rows.length > limit ? (page.at(-1)?.cursor ?? null) : null };
}

/** The budget's latest alerts, newest first. */
export async function listBudgetAlerts(db: Db, p: { budgetId: number; limit?: number }): Promise<Alert[]> {
  return db
    .select()
    .from(alerts)
    .where(eq(alerts.budgetId, p.budgetId))
    .orderBy(desc(alerts.createdAt), desc(alerts.id))
    .limit(p.limit ?? BUDGET_LOG_LIMIT);
}

export const BUDGET_OVERRIDES_SHOWN = 100;

/** The per-account values of a budget, by account, the first BUDGET_OVERRIDES_SHOWN, and how many there are. */
export async function listBudgetOverrides(db: Db, p: { budgetId: number }): Promise<{ rows: OverrideRow[]; total: number }> {
  const [rows, counts] = await Promise.all([
    listOverrides(db, "budget", [p.budgetId], { limit: BUDGET_OVERRIDES_SHOWN }),
    countOverrides(db, "budget", [p.budgetId]),
  ]);
  return { rows, total: counts.get(p.budgetId) ?? 0 };
}
