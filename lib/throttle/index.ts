// The soft per-caller throttle as staff see it: shown apart from the ceilings, approximate by design.
export { listThrottleActivity, type ListThrottleActivityOptions, type ThrottleActivity, type ThrottleCaller } from "./activity";
export { describeFailureMode, describeThrottle } from "./describe";
export { pruneThrottleCounters } from "./prune";
