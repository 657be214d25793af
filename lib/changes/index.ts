// The door to change control: a raise takes two people, lowering takes one. What the dashboard,
// the CLI and tests call (docs/change-control.md).
export { acknowledgeBreakGlass, breakGlass } from "./break-glass";
export { isChangeControl, setupControl, type ChangeControl } from "./context";
export { approveChange, cancelChange, rejectChange } from "./decide";
export { ChangeControlError, type AskInstead, type ChangeControlErrorCode } from "./errors";
export { expireChangeRequests } from "./expire";
export { isBoundsRaise, isNewValueRaise, isValueRaise } from "./raise";
export { getChangeRequest, listChangeRequests, pendingChangeRequests, pendingForEndpoint, unacknowledgedBreakGlass, type ChangeRequestView, type ListChangeRequestsParams } from "./read";
export { requestChange } from "./request";
export {
  BREAK_GLASS_MIN_REASON,
  changeKindLabels,
  changeKinds,
  isChangeKind,
  REQUEST_TTL_MS,
  type ApproveResult,
  type ChangeKind,
  type ChangeRequest,
  type ChangeRequestState,
  type RaiseEndInput,
  type Requester,
  type RequestChangeParams,
} from "./types";
