import { actorName } from "@/lib/audit/actor";
import { requireApproval } from "@/lib/control/context";
import { isValueRaise } from "@/lib/control/raise";
import { parseConfirmation, previewAdjustment, type AdjustmentKind, type Clamp } from "./parse";
import type { LimitChange, LimitTarget } from "./target";

/** A person's edit of a locked limit's value: exactly what was typed, and typed again for a large raise. */
export type ValueEdit = LimitChange & { input: string; confirm?: string };

export type ValueResult = {
  kind: Exclude<AdjustmentKind, "unchanged">;
  previous: number;
  applied: number;
  typed: number;
  clamped: Clamp;
  version: number;
  message: string;
};

/**
 * The value edit of a locked ceiling or budget with its audit row: clamped into its bounds (the
 * clamp is logged), 0 kills it (its value is remembered for restore), a value on a killed one
 * restores it, a raise to CONFIRM_RAISE_FACTOR times or more is typed twice. A raise needs a
 * ChangeControl (an approved request's); a lowering, a kill and a restore to the value from before
 * the kill do not. The dashboard's, the CLI's, a schedule's and an approved request's edit of a
 * value all write through here.
 */
export async function writeLimitValue(target: LimitTarget, p: ValueEdit): Promise<ValueResult> {
  const preview = previewAdjustment({
    raw: p.input,
    current: target.value,
    valueBeforeKill: target.valueBeforeKill,
    min: target.minValue,
    max: target.maxValue,
    currency: target.currency,
  });
  if (!preview.ok) throw target.refuse("invalid_input", preview.error, "input");
  if (preview.kind === "unchanged") throw target.refuse("unchanged", preview.message);
  if (preview.needsConfirmation && parseConfirmation(p.confirm ?? "", target.currency) !== preview.typed) {
    throw target.refuse("confirmation_required", `${preview.message}. The confirmation must be exactly ${target.format(preview.typed)}`);
  }
  if (isValueRaise(target, preview.applied)) {
    requireApproval(p.changeControl, `${target.label} ${target.format(target.value)} → ${target.format(preview.applied)}`, target.askValue(preview.typed));
  }
  const kind = preview.kind;
  const now = new Date();
  const version = await target.save({
    value: preview.applied,
    ...(kind === "kill"
      ? { valueBeforeKill: target.value, killedAt: now, killedBy: actorName(p.actor) }
      : { valueBeforeKill: null, killedAt: null, killedBy: null }),
    updatedAt: now,
  });
  await target.audit(p, {
    verb: kind === "kill" || kind === "restore" ? kind : "adjust",
    rawInput: p.input,
    previousValue: target.value,
    appliedValue: preview.applied,
    clamped: preview.clamped !== null,
    details: {
      kind,
      typed: preview.typed,
      clampedTo: preview.clamped,
      bounds: { min: target.minValue, max: target.maxValue },
      ...(kind === "restore" ? { valueBeforeKill: target.valueBeforeKill } : {}),
    },
  });
  return { kind, previous: target.value, applied: preview.applied, typed: preview.typed, clamped: preview.clamped, version, message: preview.message };
}
