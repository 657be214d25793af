import type { Db } from "@/db/client";
import type { Budget } from "@/db/schema";
import { formatMoney } from "@/lib/format";
import { CatalogError, InputError } from "@/lib/limits/errors";
import type { LimitTarget } from "@/lib/limits/target";
import { recordBudgetChange, saveBudget } from "./write";

/** A budget's value in its currency, as a person reads it ("none" where there is none). */
export const budgetMoney = (b: Pick<Budget, "currency">, micros: number | null) => (micros === null ? "none" : formatMoney(micros, b.currency));

/**
 * A budget its verb has locked (lockedBudget), as the limits kernel's verbs see it: named by its
 * key, money in its currency, audited by key as `budget.<verb>`.
 */
export function budgetTarget(tx: Db, budget: Budget): LimitTarget {
  return {
    kind: "budget",
    id: budget.id,
    limitId: budget.limitId,
    value: budget.value,
    valueBeforeKill: budget.valueBeforeKill,
    defaultValue: budget.defaultValue,
    minValue: budget.minValue,
    maxValue: budget.maxValue,
    killedAt: budget.killedAt,
    killedBy: budget.killedBy,
    currency: budget.currency,
    label: `budget ${budget.key}`,
    format: (value) => budgetMoney(budget, value),
    ask: (caller, value, ends) => ({
      kind: "budget.override",
      change: { budgetKey: budget.key, caller, value, ...(ends ? { expiresAfterSeconds: ends } : {}) },
    }),
    askValue: (value) => ({ kind: "budget.value", change: { budgetKey: budget.key, value } }),
    askBounds: ({ min, max }) => ({ kind: "budget.bounds", change: { budgetKey: budget.key, min, max } }),
    refuse: (code, message, path) => (code === "invalid_input" ? InputError.of(message, path) : new CatalogError(code, message)),
    save: async (fields) => (await saveBudget(tx, budget.id, fields)).version,
    audit: (change, event) => {
      const { verb, ...rest } = event;
      return recordBudgetChange({ tx, ...change }, budget, { action: `budget.${verb}`, ...rest });
    },
  };
}
