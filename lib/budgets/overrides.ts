import type { Db } from "@/db/client";
import type { Budget } from "@/db/schema";
import { deleteLimitOverride, type OverrideInput, type OverrideRemoval, writeLimitOverride } from "@/lib/limits/overrides";
import { parseCaller, recordRejectedInput } from "@/lib/limits/rejected";
import { clampToBounds, parseMoneyInput, type Clamp } from "@/lib/limits/parse";
import { invalidInput, requireCatalogReason } from "@/lib/limits/errors";
import { budgetTarget } from "./target";
import { type BudgetChange, lockedBudget, recordBudgetChange, saveBudget } from "./write";

// A per-account budget's overrides, through the one writer of both kinds (lib/limits/overrides.ts,
// where change control and the lock order are said): writeOverride and deleteOverride hold a
// catalog file's overrides to it too. Lock order: the members' endpoints, the budget, the account.
export type SetBudgetOverrideParams = OverrideInput & { key: string };
export type RemoveBudgetOverrideParams = OverrideRemoval & { key: string };
export type BudgetOverrideResult = {
  key: string;
  caller: string;
  previous: number | null;
  applied: number | null;
  clamped: Clamp;
  currency: string;
  /** When the override ends by itself (null: never). */
  expiresAt: Date | null;
};

/** One billing account's own value on a per-account budget, inside its bounds; 0 blocks that account on every member. */
export async function setBudgetOverride(db: Db, p: SetBudgetOverrideParams): Promise<BudgetOverrideResult> {
  const caller = parseCaller(p.caller);
  const parsed = parseMoneyInput(p.input, "value");
  if (!parsed.ok) {
    await recordRejectedInput(db, { kind: "budget", key: p.key }, p, parsed.error, { caller, override: true });
    throw invalidInput([{ path: "input", message: parsed.error }]);
  }
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    const { applied, clamped } = clampToBounds(parsed.micros, { min: budget.minValue, max: budget.maxValue });
    const { previous, expiresAt } = await writeOverride(
      { tx, actor: p.actor, reason, changeControl: p.changeControl },
      budget,
      { caller, value: applied, reason, expiresAfterSeconds: p.expiresAfterSeconds },
      { rawInput: p.input, clamped },
    );
    return { key: budget.key, caller, previous, applied, clamped, currency: budget.currency, expiresAt };
  });
}

/** Sets an override of a locked per-account budget; returns the value it had (null: none) and its end. */
export async function writeOverride(
  p: BudgetChange,
  budget: Budget,
  o: { caller: string; value: number; reason: string; expiresAfterSeconds?: number | null; expiresAt?: Date | null },
  typed: { rawInput?: string; clamped?: Clamp } = {},
): Promise<{ previous: number | null; expiresAt: Date | null }> {
  if (budget.scope !== "account") throw invalidInput([{ path: "caller", message: `${budget.key} is a global budget: overrides are for a per-account budget` }]);
  const { previous: existing, expiresAt } = await writeLimitOverride(p.tx, budgetTarget(p.tx, budget), {
    caller: o.caller,
    value: o.value,
    reason: o.reason,
    expiresAfterSeconds: o.expiresAfterSeconds,
    expiresAt: o.expiresAt,
    changeControl: p.changeControl,
  });
  await saveBudget(p.tx, budget.id, {});
  await recordBudgetChange(p, budget, {
    action: "budget.override.set",
    rawInput: typed.rawInput ?? null,
    previousValue: existing,
    appliedValue: o.value,
    clamped: (typed.clamped ?? null) !== null,
    details: { caller: o.caller, budgetValue: budget.value, clampedTo: typed.clamped ?? null, expiresAt: expiresAt?.toISOString() ?? null },
  });
  return { previous: existing, expiresAt };
}

/** Returns one billing account to the budget's own value. */
export async function removeBudgetOverride(db: Db, p: RemoveBudgetOverrideParams): Promise<BudgetOverrideResult> {
  const caller = parseCaller(p.caller);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    const previous = await deleteOverride({ tx, actor: p.actor, reason, changeControl: p.changeControl }, budget, caller);
    return { key: budget.key, caller, previous, applied: null, clamped: null, currency: budget.currency, expiresAt: null };
  });
}

export async function deleteOverride(p: BudgetChange, budget: Budget, caller: string): Promise<number> {
  const removed = await deleteLimitOverride(p.tx, budgetTarget(p.tx, budget), { caller, changeControl: p.changeControl });
  await saveBudget(p.tx, budget.id, {});
  await recordBudgetChange(p, budget, {
    action: "budget.override.remove",
    previousValue: removed,
    appliedValue: null,
    clamped: false,
    details: { caller },
  });
  return removed;
}
