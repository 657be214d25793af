// The door to spend history for charts: aggregations in SQL over the usage counters and the
// adjustment log, returning integers (units, money in micros) that components format at the edge.
export { dailySpend, DailySpendParams, type DailySpend, type KillPeriod, type SpendDay } from "./daily";
export { SpendNotFoundError } from "./errors";
export { monthToDate, MonthToDateParams, type MonthDay, type MonthToDateSpend } from "./month";
export { overviewTrends, TREND_DAYS, type EndpointTrend, type TrendPoint } from "./overview";
export type { SpendSource } from "./source";
export { endpointSpendCharts, type EndpointSpendCharts } from "./charts";
