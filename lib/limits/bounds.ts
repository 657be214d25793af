import type { Db } from "@/db/client";
import { requireApproval, type ChangeControl } from "@/lib/control/context";
import { isBoundsRaise } from "@/lib/control/raise";
import { activeRevertTo } from "@/lib/control/raise-floor";
import { clampToBounds, type Bounds, type Clamp } from "./parse";
import type { LimitTarget } from "./target";

// New bounds on a ceiling or a budget, written once for both kinds: what they pull inside them, and
// when moving them loosens spend. The kind's verb saves the move with whatever else it changes (a
// budget's bounds are saved with its other fields) and clamps the plans' values (clampPlanValues).

/** What new bounds do to a limit: its value, the value a restore puts back and its default, each inside them. */
export type BoundsMove = Bounds & {
  value: number;
  /** Where the value was clamped to, if it was. */
  valueClamped: Clamp;
  valueBeforeKill: number | null;
  defaultValue: number;
};

/**
 * Pulls the limit's values inside `bounds`. The default is the one given (a budget's form sets it)
 * or the limit's own pulled in like any value: it may be 0 only if the minimum is.
 */
export function moveBounds(target: Pick<LimitTarget, "value" | "valueBeforeKill" | "defaultValue">, bounds: Bounds, defaultValue?: number): BoundsMove {
  const value = clampToBounds(target.value, bounds);
  return {
    min: bounds.min,
    max: bounds.max,
    value: value.applied,
    valueClamped: value.clamped,
    valueBeforeKill: target.valueBeforeKill === null ? null : clampToBounds(target.valueBeforeKill, bounds).applied,
    defaultValue: defaultValue ?? Math.min(Math.max(target.defaultValue, bounds.min), bounds.max),
  };
}

/**
 * A move that loosens spend needs a second admin (a ChangeControl): a higher maximum, value, value a
 * restore puts back or default where a restore would bring it back, or a minimum above what an
 * active raise end returns to (isBoundsRaise).
 */
export async function requireBoundsApproval(tx: Db, target: LimitTarget, move: BoundsMove, changeControl: ChangeControl | undefined): Promise<void> {
  const revertTo = await activeRevertTo(tx, target.kind === "ceiling" ? { ceilingId: target.id } : { budgetId: target.id });
  const next = { max: move.max, min: move.min, value: move.value, valueBeforeKill: move.valueBeforeKill, default: move.defaultValue };
  if (!isBoundsRaise({ ...target, revertTo }, next)) return;
  const f = target.format;
  if (target.minValue === move.min && target.maxValue === move.max) {
    // There is no kind of request for a default alone: ask for the value instead.
    requireApproval(changeControl, `${target.label} default ${f(target.defaultValue)} → ${f(move.defaultValue)} (a restore of it at 0 puts its default back)`);
  }
  requireApproval(
    changeControl,
    `${target.label} bounds ${f(target.minValue)}..${f(target.maxValue)} → ${f(move.min)}..${f(move.max)}`,
    target.askBounds(move),
  );
}
