// The door to budgets: a hard limit in money over several member endpoints. What the dashboard,
// the catalog file and tests call; enforcement reads the same tables in reserve_batch.
export {
  adjustBudget,
  createBudget,
  killBudget,
  removeBudgetOverride,
  restoreBudget,
  setBudgetArchived,
  setBudgetOverride,
  updateBudget,
  type AdjustBudgetParams,
  type AdjustBudgetResult,
  type BudgetFieldChange,
  type BudgetOverrideResult,
  type BudgetValueChange,
} from "./change";
export { budgetSentence } from "./money";
export { moneyInputText, parseMoneyInput } from "@/lib/limits/parse";
export { budgetKeysOfEndpoint, budgetSentenceOf, listMemberOptions, readBudget, readBudgets, type CatalogBudget } from "./read";
export { BudgetFields, BudgetSpec, type BudgetFieldsInput, type BudgetSpecInput } from "./spec";
export * from "./dashboard";
export { BUDGET_RE_ADD_WINDOW_HOURS, loosenedArchivedBudget, looserRecentBudget } from "./re-add";
