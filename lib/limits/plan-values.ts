import { and, eq, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { planLimitValues, plans, type NewPlan, type Plan } from "@/db/schema";
import { CatalogError } from "@/lib/limits/errors";
import { auditOf, auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { clampToBounds, type Bounds } from "@/lib/limits/parse";

// New bounds on a ceiling or a budget pull the plans' values on it inside them, in the transaction
// that changes the bounds (which holds the endpoint locks already), as they pull the value in force:
// a plan value lives inside the bounds or is 0 (0 refuses the plan's accounts, like a kill). Each
// value moved is logged as plan.value.clamped, so a plan's history explains every change it saw.

type Clamper = { tx: Db; actor: AuditActor; reason: string | null; details?: Record<string, unknown> };

/** The limit whose bounds moved: a per-caller ceiling (on its endpoint) or a per-account budget. */
export type PlanValuesLimit =
  | { kind: "ceiling"; id: number; limitId: number; endpoint: { id: number; key: string } }
  | { kind: "budget"; id: number; limitId: number; key: string; currency: string };

/** Clamps every plan's value on one limit into `bounds`; returns how many moved. */
export async function clampPlanValues(p: Clamper, limit: PlanValuesLimit, bounds: Bounds): Promise<number> {
  const rows = resultRows<{ planId: number; planKey: string; value: number }>(
    await p.tx.execute(sql`
      select v.plan_id as "planId", ${plans.key} as "planKey", v.value
      from plan_limit_values v join ${plans} on ${plans.id} = v.plan_id
      where v.limit_id = ${limit.limitId} and v.value <> 0 and (v.value < ${bounds.min} or v.value > ${bounds.max})
      order by v.plan_id
      for update of v`),
  );
  for (const row of rows) {
    const { applied, clamped } = clampToBounds(Number(row.value), bounds);
    await putPlanValue(p.tx, row.planId, limit.limitId, applied);
    // A form open on the plan's old value must not save over the clamp unseen.
    await savePlan(p.tx, row.planId, {});
    await recordAudit(p.tx, {
      ...(limit.kind === "ceiling" ? auditOf(p.actor, limit.endpoint, limit.id) : auditActorFields(p.actor)),
      action: "plan.value.clamped",
      target: row.planKey,
      previousValue: Number(row.value),
      appliedValue: applied,
      clamped: true,
      reason: p.reason,
      details: {
        planId: row.planId,
        ...(limit.kind === "budget" ? { budgetId: limit.id, budgetKey: limit.key, currency: limit.currency } : {}),
        clampedTo: clamped,
        bounds,
        ...p.details,
      },
    });
  }
  return rows.length;
}

/** A plan's value on one limit (null: it sets none there, and the limit's own value binds). */
export async function planValueOf(db: Db, planId: number, limitId: number): Promise<number | null> {
  const [row] = await db
    .select({ value: planLimitValues.value })
    .from(planLimitValues)
    .where(and(eq(planLimitValues.planId, planId), eq(planLimitValues.limitId, limitId)));
  return row?.value ?? null;
}

/** Sets a plan's value on one limit (the caller holds the limit's locks and has checked the value). */
export async function putPlanValue(tx: Db, planId: number, limitId: number, value: number): Promise<void> {
  await tx
    .insert(planLimitValues)
    .values({ planId, limitId, value })
    .onConflictDoUpdate({ target: [planLimitValues.planId, planLimitValues.limitId], set: { value, updatedAt: new Date() } });
}

/** Removes a plan's value on one limit; returns the value it had (null: none). */
export async function dropPlanValue(tx: Db, planId: number, limitId: number): Promise<number | null> {
  const [removed] = await tx
    .delete(planLimitValues)
    .where(and(eq(planLimitValues.planId, planId), eq(planLimitValues.limitId, limitId)))
    .returning({ value: planLimitValues.value });
  return removed?.value ?? null;
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
