import { MINUTE_MS } from "@/lib/time";

// What a budget's numbers mean for a person: its state, the even pace and a projection to the end
// of the window. Pure, so the rules are tested without a database.

/** live; alerting: spend has crossed one of its alert thresholds; killed: value 0; archived. */
export const BUDGET_STATES = ["live", "alerting", "killed", "archived"] as const;
export type BudgetState = (typeof BUDGET_STATES)[number];

/** Before this much of a window has passed, spend / elapsed says nothing yet: no projection. */
export const MIN_PROJECTION_MS = 15 * MINUTE_MS;

export type WindowProgress = {
  /** Share of the window elapsed at `now`, 0..1. */
  elapsed: number;
  /** The value spread evenly over the window, at `now`, in micros. */
  pace: number;
  /** spend / elapsed, in micros; null in the first minutes of a window. */
  projection: number | null;
};

export function windowProgress(p: { start: Date; end: Date; now: Date; spend: number; value: number }): WindowProgress {
  const length = p.end.getTime() - p.start.getTime();
  const passed = Math.min(Math.max(0, p.now.getTime() - p.start.getTime()), length);
  const elapsed = length > 0 ? passed / length : 1;
  return {
    elapsed,
    pace: Math.round(p.value * elapsed),
    projection: passed < MIN_PROJECTION_MS ? null : Math.round(p.spend / elapsed),
  };
}

/** The highest alert threshold (percent) that `spend` has reached against `value`, or null. */
export function crossedThreshold(spend: number, value: number, thresholds: readonly number[]): number | null {
  if (value <= 0) return null;
  // Integers throughout: spend * 100 >= t * value, so 80% of 1 micro short of a threshold never rounds up.
  const crossed = thresholds.filter((t) => spend * 100 >= t * value);
  return crossed.length === 0 ? null : Math.max(...crossed);
}

export function budgetState(p: { value: number; killedAt: Date | null; archivedAt: Date | null; crossed: number | null }): BudgetState {
  if (p.archivedAt !== null) return "archived";
  if (p.value === 0 || p.killedAt !== null) return "killed";
  return p.crossed !== null ? "alerting" : "live";
}
