import { and, asc, count, desc, eq, isNotNull, isNull, like, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { accounts, auditEvents, budgets, ceilings, endpoints, planLimitValues, plans, type AuditEvent, type Plan } from "@/db/schema";
import { CatalogError } from "@/lib/limits/errors";

// What the plans page, a plan's page, the CLI and the catalog export read.

export type PlanSummary = {
  id: number;
  key: string;
  name: string;
  description: string;
  isDefault: boolean;
  accounts: number;
  /** The default plan's count on a large table: its unassigned accounts are estimated (see unassignedAccounts). */
  approximate: boolean;
  version: number;
};

/** Below this many accounts the unassigned ones are counted exactly; above it, estimated. */
export const EXACT_UNASSIGNED_UP_TO = 200_000;

/**
 * Accounts on no plan (the default plan's). Counting them reads every such row: 250 ms at 900,000
 * of a million, too slow for a page. Past EXACT_UNASSIGNED_UP_TO the count is the planner's row
 * estimate of the table (kept by autovacuum's analyze) less the assigned accounts, which an index
 * counts exactly; the pages print it with "about".
 */
export async function unassignedAccounts(db: Db, exactUpTo = EXACT_UNASSIGNED_UP_TO): Promise<{ n: number; approximate: boolean }> {
  const [est] = resultRows<{ total: number | string; assigned: number | string }>(
    await db.execute(sql`select (select reltuples from pg_class where oid = 'accounts'::regclass) as total,
                                (select count(*) from accounts where plan_id is not null) as assigned`),
  );
  const total = Number(est?.total ?? -1);
  if (total >= exactUpTo) return { n: Math.max(0, Math.round(total) - Number(est?.assigned ?? 0)), approximate: true };
  const [exact] = await db.select({ n: count() }).from(accounts).where(isNull(accounts.planId));
  return { n: exact?.n ?? 0, approximate: false };
}

/**
 * Every plan with how many accounts are on it. An account with no plan is on the default plan, so
 * the default's count is those plus the accounts assigned to it by name.
 */
export async function listPlans(db: Db): Promise<PlanSummary[]> {
  const [rows, assigned, unassigned] = await Promise.all([
    db.select().from(plans).orderBy(asc(plans.key)),
    db.select({ planId: accounts.planId, n: count() }).from(accounts).where(isNotNull(accounts.planId)).groupBy(accounts.planId),
    unassignedAccounts(db),
  ]);
  const byPlan = new Map(assigned.map((r) => [r.planId, r.n]));
  return rows.map((p) => ({
    id: p.id,
    key: p.key,
    name: p.name,
    description: p.description,
    isDefault: p.isDefault,
    accounts: (byPlan.get(p.id) ?? 0) + (p.isDefault ? unassigned.n : 0),
    approximate: p.isDefault && unassigned.approximate,
    version: p.version,
  }));
}

/** A per-caller ceiling with the plan's value on it (null: the ceiling's own value binds). */
export type PlanCeilingRow = {
  ceilingId: number;
  endpointKey: string;
  endpointName: string;
  unit: string;
  archived: boolean;
  metric: "units" | "calls";
  window: string;
  /** The ceiling's own value (0: killed, which binds every account whatever the plan says). */
  ceilingValue: number;
  /** What a restore of a killed ceiling puts back: a raise is compared with it. */
  ceilingBeforeKill: number | null;
  min: number;
  max: number;
  planValue: number | null;
};

/** A per-account budget with the plan's value on it (null: the budget's own value binds). */
export type PlanBudgetRow = {
  budgetId: number;
  budgetKey: string;
  budgetName: string;
  currency: string;
  archived: boolean;
  budgetValue: number;
  budgetBeforeKill: number | null;
  min: number;
  max: number;
  planValue: number | null;
};

export type PlanDetail = { plan: Plan; accounts: number; approximate: boolean; ceilings: PlanCeilingRow[]; budgets: PlanBudgetRow[] };

/** One plan by key, with its value (or none) beside every per-caller ceiling and per-account budget. */
export async function readPlan(db: Db, key: string): Promise<PlanDetail> {
  const [plan] = await db.select().from(plans).where(eq(plans.key, key));
  if (!plan) throw new CatalogError("not_found", `no plan '${key}'`);
  const [ceilingRows, budgetRows, [assigned], unassigned] = await Promise.all([
    db
      .select({
        ceilingId: ceilings.id,
        endpointKey: endpoints.key,
        endpointName: endpoints.name,
        unit: endpoints.unit,
        archivedAt: endpoints.archivedAt,
        metric: ceilings.metric,
        window: ceilings.window,
        ceilingValue: ceilings.value,
        ceilingBeforeKill: ceilings.valueBeforeKill,
        min: ceilings.minValue,
        max: ceilings.maxValue,
        planValue: planLimitValues.value,
      })
      .from(ceilings)
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .leftJoin(planLimitValues, and(eq(planLimitValues.limitId, ceilings.limitId), eq(planLimitValues.planId, plan.id)))
      .where(eq(ceilings.scope, "caller"))
      .orderBy(asc(endpoints.key), asc(ceilings.id)),
    db
      .select({
        budgetId: budgets.id,
        budgetKey: budgets.key,
        budgetName: budgets.name,
        currency: budgets.currency,
        archivedAt: budgets.archivedAt,
        budgetValue: budgets.value,
        budgetBeforeKill: budgets.valueBeforeKill,
        min: budgets.minValue,
        max: budgets.maxValue,
        planValue: planLimitValues.value,
      })
      .from(budgets)
      .leftJoin(planLimitValues, and(eq(planLimitValues.limitId, budgets.limitId), eq(planLimitValues.planId, plan.id)))
      .where(eq(budgets.scope, "account"))
      .orderBy(asc(budgets.key)),
    db.select({ n: count() }).from(accounts).where(eq(accounts.planId, plan.id)),
    plan.isDefault ? unassignedAccounts(db) : Promise.resolve({ n: 0, approximate: false }),
  ]);
  return {
    plan,
    accounts: (assigned?.n ?? 0) + unassigned.n,
    approximate: unassigned.approximate,
    ceilings: ceilingRows.map(({ archivedAt, ...r }) => ({ ...r, archived: archivedAt !== null })),
    budgets: budgetRows.map(({ archivedAt, ...r }) => ({ ...r, archived: archivedAt !== null })),
  };
}

/** The plan's latest audit events, newest first: its edits, values, clamps and refused inputs. */
export async function listPlanEvents(db: Db, key: string, limit = 30): Promise<AuditEvent[]> {
  return db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.target, key), like(auditEvents.action, "plan.%")))
    .orderBy(desc(auditEvents.at), desc(auditEvents.id))
    .limit(limit);
}

/** The plans' values on one ceiling, by plan key: what a ceiling's removal takes with it, for its audit event. */
export async function planValuesOnCeiling(db: Db, ceilingId: number): Promise<{ plan: string; value: number }[]> {
  return db
    .select({ plan: plans.key, value: planLimitValues.value })
    .from(planLimitValues)
    .innerJoin(plans, eq(plans.id, planLimitValues.planId))
    .innerJoin(ceilings, eq(ceilings.limitId, planLimitValues.limitId))
    .where(eq(ceilings.id, ceilingId))
    .orderBy(asc(plans.key));
}
