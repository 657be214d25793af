// The door to change control: a raise takes two people, lowering takes one. What the dashboard,
// the CLI and tests call (docs/change-control.md).
export { acknowledgeBreakGlass, breakGlass } from "./break-glass";
export { isChangeControl, setupControl, type ChangeControl } from "@/lib/control/context";
export { approveChange, cancelChange, rejectChange } from "./decide";
export { ChangeControlError, type AskInstead, type ChangeControlErrorCode } from "@/lib/control/errors";
export { expireChangeRequests } from "./expire";
export { isBoundsRaise, isNewValueRaise, isValueRaise } from "@/lib/control/raise";
export {
  getChangeRequest,
  listChangeRequests,
  pendingChangeRequests,
  pendingForEndpoint,
  unacknowledgedBreakGlass,
  type ChangeRequestView,
  type ListChangeRequestsParams,
} from "./read";
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
// Timing: raises that end and scheduled changes (the worker runs them: lib/worker/jobs.ts).
export { activeRaiseEnds, endRaises, recordRaiseEnd, type ActiveRaiseEnd, type RecordRaiseEndParams } from "./raise-ends";
export {
  activateSchedule,
  cancelSchedule,
  createSchedule,
  listSchedules,
  runDueSchedules,
  type CreateScheduleParams,
  type CreatedSchedule,
  type ScheduleView,
} from "./schedules";
export { parseTimeOfDay, timeOfDayOf } from "./schedule-time";
// What a lower value would have refused, replayed from the reservations ledger.
export { whatIf, whatIfLast7And30, WhatIfError, type WhatIfParams, type WhatIfResult } from "./what-if";
