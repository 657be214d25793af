import { and, asc, eq, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgetMembers, budgets, endpoints, type Budget, type NewBudget } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import type { NewAuditEvent } from "@/db/schema/audit-events";
import { controlDetails, type ChangeControl } from "@/lib/control/context";
import { CatalogConflictError, CatalogError, invalidInput, type Issue } from "@/lib/limits/errors";

// The budgets' writes, each inside the caller's transaction with its audit event. Every change
// takes the exclusive endpoint locks of all the budget's members first (old and new ones on a
// membership change: ceilings.lock_endpoints_for_change, the lock a ceiling edit takes), then the
// budget row FOR UPDATE. A reservation batch holds those endpoint locks shared while it reads and
// charges the budget, so an edit waits for the batches in flight on any member and binds the next.

/** As a catalog Change: `changeControl` is the permission to raise (lib/control/context.ts). */
export type BudgetChange = { tx: Db; actor: AuditActor; reason: string | null; details?: Record<string, unknown>; changeControl?: ChangeControl };

export type MemberEndpoint = { id: number; key: string; currency: string; archivedAt: Date | null };

/** The endpoints' advisory locks, exclusive, in id order (the function sorts them). */
export async function lockMembers(tx: Db, endpointIds: readonly number[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await tx.execute(sql`select ceilings.lock_endpoints_for_change(${`{${[...endpointIds].join(",")}}`}::int[])`);
}

export async function memberIdsOf(tx: Db, budgetId: number): Promise<number[]> {
  const rows = await tx
    .select({ id: budgetMembers.endpointId })
    .from(budgetMembers)
    .where(eq(budgetMembers.budgetId, budgetId))
    .orderBy(asc(budgetMembers.endpointId));
  return rows.map((r) => r.id);
}

export async function endpointsByKey(tx: Db, keys: readonly string[]): Promise<Map<string, MemberEndpoint>> {
  if (keys.length === 0) return new Map();
  const rows = await tx
    .select({ id: endpoints.id, key: endpoints.key, currency: endpoints.currency, archivedAt: endpoints.archivedAt })
    .from(endpoints)
    .where(inArray(endpoints.key, [...keys]));
  return new Map(rows.map((r) => [r.key, r]));
}

/**
 * The member endpoints of a budget by key, checked under their locks: each exists, is live (or is
 * in `mayBeArchived`: already a member, which stays until removed), and is priced in the budget's
 * currency. Every problem is reported at once, each naming its member (`members[2]`).
 */
export async function checkMembers(
  tx: Db,
  keys: readonly string[],
  currency: string,
  mayBeArchived: ReadonlySet<string> = new Set(),
): Promise<MemberEndpoint[]> {
  const found = await endpointsByKey(tx, keys);
  const problems: Issue[] = [];
  const out: MemberEndpoint[] = [];
  keys.forEach((key, i) => {
    const e = found.get(key);
    const path = `members[${i}]`;
    if (!e) problems.push({ path, message: `no endpoint '${key}'` });
    else if (e.archivedAt !== null && !mayBeArchived.has(key))
      problems.push({ path, message: `endpoint '${key}' is archived: it refuses every call and cannot join a budget` });
    else if (e.currency !== currency)
      problems.push({ path, message: `endpoint '${key}' is priced in ${e.currency}, the budget counts ${currency}: one currency per budget` });
    else out.push(e);
  });
  if (problems.length > 0) throw invalidInput(problems);
  return out;
}

/**
 * The members, checked, after their locks were taken from an earlier read by key: an endpoint
 * created under one of those keys in between is not locked, so the edit is not made (rare: the
 * person saves again).
 */
export async function lockedMembers(
  tx: Db,
  keys: readonly string[],
  currency: string,
  mayBeArchived: ReadonlySet<string>,
  locked: readonly number[],
): Promise<MemberEndpoint[]> {
  const members = await checkMembers(tx, keys, currency, mayBeArchived);
  const missed = members.filter((m) => !locked.includes(m.id));
  if (missed.length > 0)
    throw new CatalogError("conflict", `${missed.map((m) => m.key).join(", ")} was created while this was saved. Nothing was saved; try again`);
  return members;
}

/**
 * A budget by key with every member's endpoint lock (and those of `alsoLock`, the members it is
 * about to gain) and then its row FOR UPDATE, so what is checked is what is in force. A version
 * other than the one the person saw is a conflict.
 */
export async function lockedBudget(
  tx: Db,
  key: string,
  opts: { expectedVersion?: number; alsoLock?: readonly number[] } = {},
): Promise<{ budget: Budget; memberIds: number[] }> {
  const [found] = await tx.select({ id: budgets.id }).from(budgets).where(eq(budgets.key, key));
  if (!found) throw new CatalogError("not_found", `no budget '${key}'`);
  const seen = await memberIdsOf(tx, found.id);
  await lockMembers(tx, [...seen, ...(opts.alsoLock ?? [])]);
  const [budget] = await tx.select().from(budgets).where(eq(budgets.id, found.id)).for("update");
  if (!budget) throw new CatalogError("not_found", `no budget '${key}'`);
  const memberIds = await memberIdsOf(tx, budget.id);
  // A membership saved between the read and the locks: its new members are not locked. Rare; the
  // person retries against what is in force.
  if (memberIds.some((id) => !seen.includes(id)))
    throw new CatalogConflictError(budget.version, `someone else changed the members of ${key} first. Nothing was saved; try again`);
  if (opts.expectedVersion !== undefined && budget.version !== opts.expectedVersion) {
    throw new CatalogConflictError(budget.version, `someone else changed ${key} first. Nothing was saved; the form now shows the values in force`);
  }
  return { budget, memberIds };
}

/** Writes fields of a locked budget as its next version. */
export async function saveBudget(tx: Db, budgetId: number, fields: Partial<NewBudget>): Promise<Budget> {
  const [row] = await tx
    .update(budgets)
    .set({ updatedAt: new Date(), ...fields, version: sql`${budgets.version} + 1` })
    .where(eq(budgets.id, budgetId))
    .returning();
  if (!row) throw new CatalogError("not_found", `no budget #${budgetId}`);
  return row;
}

export async function setMembers(tx: Db, budgetId: number, endpointIds: readonly number[]): Promise<void> {
  await tx.delete(budgetMembers).where(eq(budgetMembers.budgetId, budgetId));
  if (endpointIds.length > 0) await tx.insert(budgetMembers).values(endpointIds.map((endpointId) => ({ budgetId, endpointId })));
}

type BudgetEvent = Omit<NewAuditEvent, "actorType" | "actor" | "reason" | "target" | "endpointId" | "endpointKey" | "ceilingId">;

/**
 * One audit event of a change to a budget: the target is the budget's key and the details carry
 * its id (the audit log names budgets as it names API keys and staff, by target).
 */
export function recordBudgetChange(p: BudgetChange, budget: Pick<Budget, "id" | "key" | "currency">, event: BudgetEvent): Promise<void> {
  return recordAudit(p.tx, {
    ...auditActorFields(p.actor),
    target: budget.key,
    reason: p.reason,
    ...event,
    // Every budget value is money: the currency lets the log show it as money, never as micros.
    details: { budgetId: budget.id, currency: budget.currency, ...event.details, ...p.details, ...controlDetails(p.changeControl) },
  });
}

/**
 * An endpoint's currency may change only while no budget in another currency counts it: a budget
 * sums money of one currency. Called by the catalog's endpoint update, under the endpoint's lock.
 */
export async function checkMemberCurrency(tx: Db, endpoint: { id: number; key: string }, currency: string): Promise<void> {
  const rows = await tx
    .select({ key: budgets.key, currency: budgets.currency })
    .from(budgetMembers)
    .innerJoin(budgets, eq(budgets.id, budgetMembers.budgetId))
    .where(eq(budgetMembers.endpointId, endpoint.id))
    .orderBy(asc(budgets.key));
  const other = rows.filter((b) => b.currency !== currency);
  if (other.length === 0) return;
  throw invalidInput([
    {
      path: "currency",
      message: `currency cannot become ${currency}: ${endpoint.key} counts in budget ${other.map((b) => `${b.key} (${b.currency})`).join(", ")}; remove it from there first (one currency per budget)`,
    },
  ]);
}

/**
 * The live (not archived) budgets that charge an endpoint, by key: where its prices turn money into
 * calls. Read under the endpoint's lock, which a membership change takes too.
 */
export async function budgetKeysCharging(tx: Db, endpointId: number): Promise<string[]> {
  const rows = await tx
    .select({ key: budgets.key })
    .from(budgetMembers)
    .innerJoin(budgets, eq(budgets.id, budgetMembers.budgetId))
    .where(and(eq(budgetMembers.endpointId, endpointId), isNull(budgets.archivedAt)))
    .orderBy(asc(budgets.key));
  return rows.map((r) => r.key);
}
