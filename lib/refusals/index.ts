// The door to the refusal log: what the dashboard, the worker and the scripts call.
export {
  chartRange,
  chooseBucketMs,
  countRefusalsByGate,
  gateChartQuery,
  rawChartQuery,
  type ChartParams,
  DEFAULT_CHART_RANGE_MS,
  type GateBucket,
  type GateChart,
  type GateCounts,
} from "./chart";
export { countAllRefusals, countMatchingRefusals, COUNT_CAP, matchingCountQuery, oldestRefusalAt, type RowCount } from "./counts";
export { CSV_HEADER, csvCell, refusalCsvLine } from "./csv";
export { getRefusal, type RefusalCeiling, type RefusalDetail } from "./detail";
export { EXPORT_BATCH_SIZE, refusalCsvChunks, refusalCsvStream } from "./export";
export { filterParams, hasFilters, parseRefusalQuery, RefusalFilters, RefusalPosition, type ParsedRefusalQuery, type SearchParams } from "./filters";
export { DEFAULT_PAGE_SIZE, listRefusals, refusalPageQuery, type RefusalPage, type RefusalRow } from "./list";
export { maskCaller, maskDestination, maskEmail, maskPhone } from "./mask";
export { DEFAULT_PURGE_BATCH, purgeOldRefusalRollups, purgeOldRefusals, type PurgeOptions } from "./purge";
export { rollupAnswers, rollupChartQuery } from "./rollup";
