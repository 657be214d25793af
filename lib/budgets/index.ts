// The door to budgets: a hard limit in money over several member endpoints. What the dashboard,
// the catalog file and tests call; enforcement reads the same tables in reserve_batch.
export { adjustBudget, type AdjustBudgetParams, type AdjustBudgetResult } from "./adjust";
export { setBudgetArchived } from "./archive";
export { createBudget } from "./create";
export { killBudget, restoreBudget, type BudgetValueChange } from "./kill";
export { removeBudgetOverride, setBudgetOverride, type BudgetOverrideResult } from "./overrides";
export { updateBudget, type BudgetFieldChange } from "./update";
export { budgetSentence } from "./money";
export { moneyInputText, parseMoneyInput } from "@/lib/limits/parse";
export { budgetKeysOfEndpoint, budgetSentenceOf, listMemberOptions, readBudget, readBudgets, type CatalogBudget } from "./read";
export { BudgetFields, BudgetSpec, type BudgetFieldsInput, type BudgetSpecInput } from "./spec";
export * from "./dashboard";
export { BUDGET_RE_ADD_WINDOW_HOURS, loosenedArchivedBudget, looserRecentBudget } from "./re-add";
