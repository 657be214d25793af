import { count, eq, sql } from "drizzle-orm";
import type { z } from "zod";
import { type Db, resultRows } from "@/db/client";
import { accounts, budgets, ceilings, planLimitValues, plans, type Plan } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { CatalogError, invalidInput, requireCatalogReason, type Issue } from "@/lib/limits/errors";
import { zodIssues } from "@/lib/limits/errors";
import { sqlState } from "@/db/sql-state";
import { type ChangeControl, controlDetails, requireApproval } from "@/lib/control/context";
import { planLoosening } from "@/lib/limits/loosening";
import { NewPlanKey, PlanDescription, PlanKey, PlanName } from "./spec";
import { savePlan } from "@/lib/limits/plan-values";
import { lockedPlan, lockPlanEndpoints, recordPlanChange, type PlanChange } from "./write";

// The plan verbs the dashboard and the CLI call (and the catalog file, through the same writes):
// create, rename, make the default, delete. Each is one transaction with its one audit event.

function read<T extends z.ZodType>(schema: T, value: unknown, path: string, problems: Issue[]): z.infer<T> | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  problems.push(...zodIssues(parsed.error).map((i) => ({ ...i, path: i.path ? `${path}.${i.path}` : path })));
  return undefined;
}

function parseKey(raw: string): string {
  const problems: Issue[] = [];
  const key = read(PlanKey, raw, "plan", problems);
  if (key === undefined) throw invalidInput(problems);
  return key;
}

/** Name and description, with any problems already found (a new plan's key): every problem at once. */
function parseFields(p: { name: string; description?: string }, problems: Issue[] = []): { name: string; description: string } {
  const name = read(PlanName, p.name, "name", problems);
  const description = read(PlanDescription, p.description ?? "", "description", problems);
  if (problems.length > 0 || name === undefined || description === undefined) throw invalidInput(problems);
  return { name, description };
}

// ---- create --------------------------------------------------------------------------------------

export type CreatePlanParams = { key: string; name: string; description?: string; actor: AuditActor; reason: string };

/** A new plan sets no values and has no accounts: nothing binds differently, so no endpoint lock. */
export async function createPlan(db: Db, p: CreatePlanParams): Promise<Plan> {
  const problems: Issue[] = [];
  const key = read(NewPlanKey, p.key, "key", problems);
  const fields = parseFields(p, problems);
  if (key === undefined) throw invalidInput(problems);
  const reason = requireCatalogReason(p.reason);
  return db.transaction((tx) => insertPlan({ tx, actor: p.actor, reason }, { key, ...fields }));
}

export async function insertPlan(p: PlanChange, fields: { key: string; name: string; description: string }): Promise<Plan> {
  let row: Plan | undefined;
  try {
    [row] = await p.tx.insert(plans).values(fields).returning();
  } catch (error) {
    if (sqlState(error) === "23505") throw new CatalogError("duplicate_key", `a plan with key '${fields.key}' already exists`);
    throw error;
  }
  if (!row) throw new Error("insert returned no plan");
  await recordPlanChange(p, row, { action: "plan.create", details: { name: row.name, description: row.description } });
  return row;
}

// ---- update: name and description ----------------------------------------------------------------

export type UpdatePlanParams = { planKey: string; expectedVersion: number; name: string; description?: string; actor: AuditActor; reason: string };
export type PlanFieldChange = { field: "name" | "description"; before: string; after: string };

export async function updatePlan(db: Db, p: UpdatePlanParams): Promise<PlanFieldChange[]> {
  const fields = parseFields(p);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const plan = await lockedPlan(tx, p.planKey, p.expectedVersion);
    const changes = await updatePlanFields({ tx, actor: p.actor, reason }, plan, fields);
    if (changes.length === 0) throw new CatalogError("unchanged", "nothing changed: the name and description already have those values");
    return changes;
  });
}

/** Renames a locked plan; what binds does not change, so no endpoint lock. Nothing changed: no event. */
export async function updatePlanFields(p: PlanChange, plan: Plan, next: { name: string; description: string }): Promise<PlanFieldChange[]> {
  const changes: PlanFieldChange[] = [];
  if (plan.name !== next.name) changes.push({ field: "name", before: plan.name, after: next.name });
  if (plan.description !== next.description) changes.push({ field: "description", before: plan.description, after: next.description });
  if (changes.length === 0) return [];
  await savePlan(p.tx, plan.id, { name: next.name, description: next.description });
  await recordPlanChange(p, plan, {
    action: "plan.update",
    details: { changes: Object.fromEntries(changes.map((c) => [c.field, { before: c.before, after: c.after }])) },
  });
  return changes;
}

// ---- the default plan ----------------------------------------------------------------------------

export type PlanVerbParams = { planKey: string; actor: AuditActor; reason: string; changeControl?: ChangeControl };

/**
 * Makes a plan the default: every account never assigned a plan is on it from the next batch.
 * All the endpoints a plan can bind are locked first; the old default is cleared before the new
 * one is set, in one transaction, so there is exactly one default at every commit.
 */
export async function setDefaultPlan(db: Db, p: PlanVerbParams): Promise<{ key: string; previous: string | null }> {
  const key = parseKey(p.planKey);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    await lockPlanEndpoints(tx);
    const plan = await lockedPlan(tx, key);
    if (plan.isDefault) throw new CatalogError("unchanged", `${plan.key} is already the default plan`);
    const previous = await makeDefaultLocked({ tx, actor: p.actor, reason, details: controlDetails(p.changeControl) }, plan, p.changeControl);
    return { key: plan.key, previous };
  });
}

/**
 * The limits switching the default to `plan` raises for the never-assigned accounts (the database's
 * reading, ceilings.plan_loosening, without overrides): none, or the switch is a raise.
 */
export async function defaultSwitchLoosening(tx: Db, plan: Pick<Plan, "id">) {
  return planLoosening(tx, { fromPlanId: null, toPlanId: plan.id });
}

/**
 * The switch itself, under lockPlanEndpoints and the plan's lock; returns the old default's key.
 * To a looser plan it is a raise: refused with approval_required unless `control` permits it.
 */
export async function makeDefaultLocked(p: PlanChange, plan: Plan, control?: ChangeControl): Promise<string | null> {
  const loose = await defaultSwitchLoosening(p.tx, plan);
  if (loose.length > 0) {
    const what = loose.map((l) => `${l.limitKind} #${l.limitId} ${l.before} → ${l.after}`).join(", ");
    requireApproval(control, `making ${plan.key} the default plan (looser for every account not assigned a plan: ${what})`, {
      kind: "plan.default",
      change: { planKey: plan.key },
    });
  }
  const [old] = await p.tx.select().from(plans).where(eq(plans.isDefault, true)).for("no key update");
  if (old) await savePlan(p.tx, old.id, { isDefault: false });
  await savePlan(p.tx, plan.id, { isDefault: true });
  await recordPlanChange(p, plan, { action: "plan.default", details: { previousDefault: old?.key ?? null } });
  return old?.key ?? null;
}

// ---- assignable by key ---------------------------------------------------------------------------

export type PlanKeyAssignableParams = PlanVerbParams & { assignable: boolean };

/**
 * Marks a plan assignable by API keys, or not. Marked, a key with accounts:write may move any
 * account onto it even when that loosens the account (the billing service's upgrades need no
 * second human each time): marking is a raise, asked of two admins once; unmarking is one
 * person's. Takes the plan FOR NO KEY UPDATE, which waits for assignments in flight (FOR SHARE).
 */
export async function setPlanKeyAssignable(db: Db, p: PlanKeyAssignableParams): Promise<{ key: string; keyAssignable: boolean }> {
  const key = parseKey(p.planKey);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const plan = await lockedPlan(tx, key);
    if (plan.keyAssignable === p.assignable) throw new CatalogError("unchanged", `${plan.key} is already ${p.assignable ? "" : "not "}assignable by key`);
    if (p.assignable) {
      requireApproval(p.changeControl, `marking ${plan.key} assignable by key (any key with accounts:write may then move accounts onto it)`, {
        kind: "plan.key_assignable",
        change: { planKey: plan.key },
      });
    }
    await savePlan(tx, plan.id, { keyAssignable: p.assignable });
    await recordPlanChange({ tx, actor: p.actor, reason, details: controlDetails(p.changeControl) }, plan, {
      action: "plan.key_assignable",
      details: { keyAssignable: p.assignable },
    });
    return { key: plan.key, keyAssignable: p.assignable };
  });
}

// ---- delete --------------------------------------------------------------------------------------

/**
 * Deletes a plan and its values. Refused while it is the default or any account is on it: moving
 * those accounts is an assignment, audited account by account, never a side effect of a delete.
 * The event keeps the values it had, so the plan can be made again from the audit log.
 */
export async function deletePlan(db: Db, p: PlanVerbParams): Promise<{ key: string }> {
  const key = parseKey(p.planKey);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    await lockPlanEndpoints(tx);
    // FOR UPDATE also waits for assignments in flight to this plan (their key-share lock on the
    // row). With every endpoint lock held, a wait would hold up every batch on those endpoints
    // (a bulk of 10,000 takes seconds): past 100 ms the delete gives up instead and says why.
    const [setting] = resultRows<{ was: string }>(
      await tx.execute(sql`select current_setting('lock_timeout') as was, set_config('lock_timeout', '100ms', true)`),
    );
    let plan: Plan;
    try {
      // In a savepoint, so a lock timeout leaves the transaction usable to answer.
      plan = await tx.transaction(async (sp) => lockedPlan(sp, key, undefined, "update"));
    } catch (error) {
      if (sqlState(error) === "55P03") throw new CatalogError("in_use", `an assignment of accounts to ${key} is being written: try again in a moment`);
      throw error;
    }
    await tx.execute(sql`select set_config('lock_timeout', ${setting?.was ?? "0"}, true)`);
    if (plan.isDefault) throw new CatalogError("in_use", `${plan.key} is the default plan: make another plan the default first`);
    const [on] = await tx.select({ n: count() }).from(accounts).where(eq(accounts.planId, plan.id));
    const n = on?.n ?? 0;
    if (n > 0) throw new CatalogError("in_use", `${n} account(s) are on ${plan.key}: assign them another plan first`);
    const ceilingValues = await tx
      .select({ ceilingId: ceilings.id, value: planLimitValues.value })
      .from(planLimitValues)
      .innerJoin(ceilings, eq(ceilings.limitId, planLimitValues.limitId))
      .where(eq(planLimitValues.planId, plan.id));
    const budgetValues = await tx
      .select({ budgetId: budgets.id, value: planLimitValues.value })
      .from(planLimitValues)
      .innerJoin(budgets, eq(budgets.limitId, planLimitValues.limitId))
      .where(eq(planLimitValues.planId, plan.id));
    try {
      await tx.delete(plans).where(eq(plans.id, plan.id));
    } catch (error) {
      if (sqlState(error) === "23503") throw new CatalogError("in_use", `accounts are on ${plan.key}: assign them another plan first`);
      throw error;
    }
    await recordPlanChange({ tx, actor: p.actor, reason }, plan, {
      action: "plan.delete",
      details: { name: plan.name, description: plan.description, ceilingValues, budgetValues },
    });
    return { key: plan.key };
  });
}
