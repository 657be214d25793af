import { and, eq, gt, lt, ne, or, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { planBudgetValues, planCeilingValues, plans, type NewPlan, type Plan } from "@/db/schema";
import { CatalogError } from "@/lib/limits/errors";
import { auditOf, auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { clampToBounds, type Bounds } from "@/lib/limits/parse";

// New bounds on a ceiling or a budget pull the plans' values on it inside them, in the transaction
// that changes the bounds (which holds the endpoint locks already), as they pull the value in force:
// a plan value lives inside the bounds or is 0 (0 refuses the plan's accounts, like a kill). Each
// value moved is logged as plan.value.clamped, so a plan's history explains every change it saw.

type Clamper = { tx: Db; actor: AuditActor; reason: string | null; details?: Record<string, unknown> };

/** Clamps every plan's value on one per-caller ceiling into `bounds`; returns how many moved. */
export async function clampPlanCeilingValues(p: Clamper, ceiling: { id: number; endpoint: { id: number; key: string } }, bounds: Bounds): Promise<number> {
  const rows = await p.tx
    .select({ planId: planCeilingValues.planId, planKey: plans.key, value: planCeilingValues.value })
    .from(planCeilingValues)
    .innerJoin(plans, eq(plans.id, planCeilingValues.planId))
    .where(
      and(
        eq(planCeilingValues.ceilingId, ceiling.id),
        ne(planCeilingValues.value, 0),
        or(lt(planCeilingValues.value, bounds.min), gt(planCeilingValues.value, bounds.max)),
      ),
    )
    .orderBy(planCeilingValues.planId)
    .for("update", { of: planCeilingValues });
  for (const row of rows) {
    const { applied, clamped } = clampToBounds(row.value, bounds);
    await p.tx
      .update(planCeilingValues)
      .set({ value: applied, updatedAt: new Date() })
      .where(and(eq(planCeilingValues.planId, row.planId), eq(planCeilingValues.ceilingId, ceiling.id)));
    // A form open on the plan's old value must not save over the clamp unseen.
    await savePlan(p.tx, row.planId, {});
    await recordAudit(p.tx, {
      ...auditOf(p.actor, ceiling.endpoint, ceiling.id),
      action: "plan.value.clamped",
      target: row.planKey,
      previousValue: row.value,
      appliedValue: applied,
      clamped: true,
      reason: p.reason,
      details: { planId: row.planId, clampedTo: clamped, bounds, ...p.details },
    });
  }
  return rows.length;
}

/** Clamps every plan's value on one per-account budget into `bounds`; returns how many moved. */
export async function clampPlanBudgetValues(p: Clamper, budget: { id: number; key: string; currency: string }, bounds: Bounds): Promise<number> {
  const rows = await p.tx
    .select({ planId: planBudgetValues.planId, planKey: plans.key, value: planBudgetValues.value })
    .from(planBudgetValues)
    .innerJoin(plans, eq(plans.id, planBudgetValues.planId))
    .where(
      and(
        eq(planBudgetValues.budgetId, budget.id),
        ne(planBudgetValues.value, 0),
        or(lt(planBudgetValues.value, bounds.min), gt(planBudgetValues.value, bounds.max)),
      ),
    )
    .orderBy(planBudgetValues.planId)
    .for("update", { of: planBudgetValues });
  for (const row of rows) {
    const { applied, clamped } = clampToBounds(row.value, bounds);
    await p.tx
      .update(planBudgetValues)
      .set({ value: applied, updatedAt: new Date() })
      .where(and(eq(planBudgetValues.planId, row.planId), eq(planBudgetValues.budgetId, budget.id)));
    await savePlan(p.tx, row.planId, {});
    await recordAudit(p.tx, {
      ...auditActorFields(p.actor),
      action: "plan.value.clamped",
      target: row.planKey,
      previousValue: row.value,
      appliedValue: applied,
      clamped: true,
      reason: p.reason,
      details: { planId: row.planId, budgetId: budget.id, budgetKey: budget.key, currency: budget.currency, clampedTo: clamped, bounds, ...p.details },
    });
  }
  return rows.length;
}

/** Writes fields of a locked plan as its next version (a value edit bumps it too). */
export async function savePlan(tx: Db, planId: number, fields: Partial<NewPlan>): Promise<Plan> {
  const [row] = await tx
    .update(plans)
    .set({ updatedAt: new Date(), ...fields, version: sql`${plans.version} + 1` })
    .where(eq(plans.id, planId))
    .returning();
  if (!row) throw new CatalogError("not_found", `no plan #${planId}`);
  return row;
}
