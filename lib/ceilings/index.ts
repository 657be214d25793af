// The door to ceilings administration: what the dashboard, the CLI and tests call.
export { adjustCeiling, type AdjustCeilingParams, type AdjustCeilingResult } from "./adjust";
export { setBounds, type SetBoundsParams, type SetBoundsResult } from "./bounds";
export { getEndpointDetail, getKillState, type EndpointDetail, type KillState, type KilledEndpoint } from "./detail";
export { CeilingConflictError, CeilingError, type CeilingErrorCode } from "./errors";
export { describeGuarantee, derivedDefault, unitLabel } from "@/lib/limits/guarantee";
export { killAll, killCeilings, killEndpoint, restoreCeilings, restoreEndpoint, type CeilingChange } from "./kill";
export {
  listEndpointsOverview,
  NEAR_LIMIT_RATIO,
  type CeilingState,
  type EndpointState,
  type CeilingView,
  type EndpointOverview,
  type MonthToDate,
} from "./overview";
export { removeOverride, setOverride, type OverrideResult } from "./overrides";
export { CallerKey } from "@/lib/canonical/caller";
export { clampToBounds, parseLimitInput, previewAdjustment, type AdjustmentPreview } from "@/lib/limits/parse";
