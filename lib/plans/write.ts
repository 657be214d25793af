import { eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgetMembers, budgets, ceilings, plans, type Plan } from "@/db/schema";
import type { NewAuditEvent } from "@/db/schema/audit-events";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { CatalogConflictError, CatalogError } from "@/lib/limits/errors";

// The plans' writes, each inside the caller's transaction with its audit event. Lock order, the
// one of every catalog edit: endpoint advisory locks (exclusive, by id), then the ceiling or budget
// row, then the plan row FOR UPDATE. A reservation batch holds its endpoints' locks shared while it
// reads the plan values, so a change waits for the batches in flight and binds the next one.

export type PlanChange = { tx: Db; actor: AuditActor; reason: string | null; details?: Record<string, unknown> };

/**
 * Every endpoint a plan can bind: those with a per-caller ceiling and the members of every
 * per-account budget. Switching the default plan or deleting a plan moves what binds on all of
 * them at once, so all are locked.
 */
export async function lockPlanEndpoints(tx: Db): Promise<void> {
  const rows = await tx.execute<{ id: number }>(sql`
    select endpoint_id as id from ${ceilings} where scope = 'caller'
    union
    select m.endpoint_id from ${budgetMembers} m join ${budgets} b on b.id = m.budget_id where b.scope = 'account'`);
  const ids = [...rows].map((r) => Number(r.id));
  if (ids.length > 0) await tx.execute(sql`select ceilings.lock_endpoints_for_change(${`{${ids.join(",")}}`}::int[])`);
}

/**
 * A plan by key, its row locked (take the endpoint locks first); a version other than the one seen
 * is a conflict. An edit never changes the key, so it takes FOR NO KEY UPDATE: an assignment of an
 * account to the plan (a foreign key's FOR KEY SHARE) does not wait for it. A delete takes FOR
 * UPDATE, which waits for assignments in flight and makes later ones fail on the foreign key.
 */
export async function lockedPlan(tx: Db, key: string, expectedVersion?: number, strength: "no key update" | "update" = "no key update"): Promise<Plan> {
  const [plan] = await tx.select().from(plans).where(eq(plans.key, key)).for(strength);
  if (!plan) throw new CatalogError("not_found", `no plan '${key}'`);
  if (expectedVersion !== undefined && plan.version !== expectedVersion) {
    throw new CatalogConflictError(plan.version, `someone else changed plan ${key} first. Nothing was saved; the form now shows what is in force`);
  }
  return plan;
}

type PlanEvent = Omit<NewAuditEvent, "actorType" | "actor" | "reason" | "target">;

/** One audit event of a change to a plan: the target is the plan's key, the details carry its id. */
export function recordPlanChange(p: PlanChange, plan: Pick<Plan, "id" | "key">, event: PlanEvent): Promise<void> {
  return recordAudit(p.tx, {
    ...auditActorFields(p.actor),
    target: plan.key,
    reason: p.reason,
    ...event,
    details: { planId: plan.id, ...event.details, ...p.details },
  });
}
