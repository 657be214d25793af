import { formatCount } from "@/lib/format";

/** The throttle as one sentence, worded so nobody mistakes it for a budget. */
export function describeThrottle(perMinute: number | null): string {
  if (perMinute === null) return "No throttle on this endpoint: callers are bounded by the ceilings alone.";
  const requests = perMinute === 1 ? "request" : "requests";
  return `Throttle (soft): ${formatCount(perMinute)} ${requests} a minute per caller — protects the service, not the budget.`;
}

/** What happens to calls when the throttle's counters cannot be read. */
export function describeFailureMode(failOpen: boolean): string {
  return failOpen
    ? "If its counters cannot be read, calls pass the throttle (fail open); the ceilings still fail closed."
    : "If its counters cannot be read, calls are refused (fail closed), like the ceilings.";
}
