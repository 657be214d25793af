// The read side of budgets for the dashboard (the Budgets pages, the overview, the endpoint page):
// each budget in its open window, a budget's page, the budgets of an endpoint. lib/budgets/index.ts
// re-exports all of it.
export {
  budgetsOfEndpoint,
  listBudgets,
  listBudgetSummaries,
  LIST_TOP_ACCOUNTS,
  readBudgetOverview,
  type BudgetOverview,
  type BudgetSummary,
  type MemberShare,
} from "./read-window";
export { readBudgetDetail, DETAIL_TOP_ACCOUNTS, type BudgetDetail } from "./read-detail";
export { topAccountsOver, topAccountsNow, WINDOW_TOP, type AccountSpend, type AccountTotal, type TopAccountsOver } from "./read-accounts";
export { budgetHistory, HISTORY_RANGES, windowsBack, type BudgetHistory, type BudgetWindowSpend, type HistoryRange } from "./read-history";
export { BUDGET_LOG_LIMIT, listBudgetAdjustments, listBudgetAlerts, listBudgetOverrides, listBudgetRefusals, type BudgetRefusalPage } from "./read-log";
export { BUDGET_STATES, budgetState, crossedThreshold, MIN_PROJECTION_MS, windowProgress, type BudgetState, type WindowProgress } from "./read-view";
