// Usage sources as staff manage them: settings, pause and resume, "Pull now", and the rules that
// map a provider's items to endpoints and budgets; with the reads of their pages. The pull itself
// is lib/reconciliation/pull.ts (the worker's), the comparison lib/reconciliation/compare.ts.

export { basisPointsText, defaultLocations, percentToBasisPoints, RuleMatch, UsageSourceInput, type UsageSourceSettings } from "./source-input";
export {
  createUsageSource,
  deleteUsageSource,
  lockUsageSource,
  readUsageSourceInput,
  requestPull,
  setUsageSourceEnabled,
  sourceVersion,
  updateUsageSource,
  type UsageSourceChange,
} from "./source-write";
export { addUsageRule, removeUsageRule, type AddUsageRuleParams } from "./source-rules";
export {
  getUsageSourceDetail,
  listRuleTargets,
  listUsageSources,
  RAW_PAGE,
  type RawUsageRow,
  type RuleTargetOptions,
  type UnmappedItem,
  type UsagePullView,
  type UsageRuleView,
  type UsageSourceDetail,
  type UsageSourceListItem,
} from "./source-read";
