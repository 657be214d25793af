import type { Db } from "@/db/client";
import type { Budget } from "@/db/schema";
import type { AdjustLimitInput } from "@/lib/limits/adjust";
import { invalidInput, requireCatalogReason } from "@/lib/limits/errors";
import { parseMoneyInput } from "@/lib/limits/parse";
import { recordRejectedInput } from "@/lib/limits/rejected";
import { type ValueResult, writeLimitValue } from "@/lib/limits/value";
import { budgetTarget } from "./target";
import { lockedBudget } from "./write";

export type AdjustBudgetParams = AdjustLimitInput & { key: string };
/** What the value edit did (the kernel's ValueResult), on which budget and in which currency. */
export type AdjustBudgetResult = ValueResult & { key: string; currency: string };

/**
 * Changes a budget's value: clamped into its bounds (the clamp is logged), 0 kills it (its value
 * is remembered for restore), a value on a killed budget restores it; a raise to 5x or more is
 * typed twice.
 */
export async function adjustBudget(db: Db, p: AdjustBudgetParams): Promise<AdjustBudgetResult> {
  const parsed = parseMoneyInput(p.input, "value");
  if (!parsed.ok) {
    await recordRejectedInput(db, { kind: "budget", key: p.key }, p, parsed.error);
    throw invalidInput([{ path: "input", message: parsed.error }]);
  }
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key, { expectedVersion: p.expectedVersion });
    return writeBudgetValue(tx, budget, { ...p, reason });
  });
}

export type BudgetValueEdit = Pick<AdjustBudgetParams, "input" | "actor" | "reason" | "confirm" | "changeControl"> & {
  /** Joins the audit row's details: the raise end that made the change. */
  details?: Record<string, unknown>;
};

/**
 * The value edit of a locked budget with its audit row (the kernel's writeLimitValue): what
 * adjustBudget does after its locks, and what an approved budget.value request and a raise's end
 * apply.
 */
export async function writeBudgetValue(tx: Db, budget: Budget, p: BudgetValueEdit): Promise<AdjustBudgetResult> {
  const r = await writeLimitValue(budgetTarget(tx, budget), p);
  return { key: budget.key, currency: budget.currency, ...r };
}
