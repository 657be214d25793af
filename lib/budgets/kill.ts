import { reasonError } from "@/lib/audit/reason";
import type { Db } from "@/db/client";
import type { Budget } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { readReason } from "@/lib/audit/reason";
import { killLimit, restoreLimit, restoreValue } from "@/lib/limits/kill";
import { CatalogError } from "@/lib/limits/errors";
import { budgetTarget } from "./target";
import { type BudgetChange, lockedBudget } from "./write";

function optionalReason(reason: string | undefined): string | null {
  const read = readReason(reason, false);
  if (!read.ok) throw reasonError(read.problem, (message) => new CatalogError("reason_required", message));
  return read.text;
}

export type KillBudgetParams = { key: string; actor: AuditActor; reason?: string };
export type BudgetValueChange = { key: string; previous: number; applied: number; currency: string };

/** Sets the budget to 0, remembering its value for restore: every call on its members is refused. */
export async function killBudget(db: Db, p: KillBudgetParams): Promise<BudgetValueChange> {
  const reason = optionalReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    // Killing twice must not make restore put back 0.
    if (budget.value === 0) throw new CatalogError("unchanged", `${budget.key} is already killed`);
    await killLocked({ tx, actor: p.actor, reason }, budget, budget.value);
    return { key: budget.key, previous: budget.value, applied: 0, currency: budget.currency };
  });
}

/** The kill of a locked budget (the kernel's killLimit); `restoreTo` is the value a restore puts back. */
export async function killLocked(p: BudgetChange, budget: Budget, restoreTo: number): Promise<void> {
  await killLimit(budgetTarget(p.tx, budget), p, restoreTo);
}

/** Puts back the value from before the kill (its default if it had none), inside the bounds in force. */
export async function restoreBudget(db: Db, p: KillBudgetParams): Promise<BudgetValueChange> {
  const reason = optionalReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    if (budget.value !== 0) throw new CatalogError("unchanged", `${budget.key} is not killed: nothing to restore`);
    const applied = restoreValue(budget);
    if (applied === 0) throw new CatalogError("unchanged", `${budget.key} has no value to restore: set a value`);
    await restoreLocked({ tx, actor: p.actor, reason }, budget, applied);
    return { key: budget.key, previous: 0, applied, currency: budget.currency };
  });
}

/** The restore of a locked, killed budget to `applied` (the kernel's restoreLimit). */
export async function restoreLocked(p: BudgetChange, budget: Budget, applied: number): Promise<void> {
  await restoreLimit(budgetTarget(p.tx, budget), p, applied);
}
