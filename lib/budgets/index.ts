// The door to budgets: what the dashboard, the CLI and tests call.

// Reads (the dashboard's Budgets pages).
export { budgetsOfEndpoint, listBudgets, listBudgetSummaries, LIST_TOP_ACCOUNTS, readBudgetOverview, type BudgetOverview, type BudgetSummary, type MemberShare } from "./read";
export { readBudget, DETAIL_TOP_ACCOUNTS, type BudgetDetail } from "./read-detail";
export { topAccountsOver, topAccountsNow, WINDOW_TOP, type AccountSpend, type AccountTotal, type TopAccountsOver } from "./read-accounts";
export { budgetHistory, HISTORY_RANGES, windowsBack, type BudgetHistory, type BudgetWindowSpend, type HistoryRange } from "./read-history";
export { BUDGET_LOG_LIMIT, listBudgetAdjustments, listBudgetAlerts, listBudgetOverrides, listBudgetRefusals, type BudgetRefusalPage } from "./read-log";
export { BUDGET_STATES, budgetState, crossedThreshold, MIN_PROJECTION_MS, windowProgress, windowWords, type BudgetState, type WindowProgress } from "./read-view";
