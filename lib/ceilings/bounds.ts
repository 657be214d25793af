import { InputError } from "@/lib/errors";
import type { Db } from "@/db/client";
import type { Ceiling, Endpoint } from "@/db/schema";
import type { ChangeControl } from "@/lib/control/context";
import type { AuditActor } from "@/lib/audit/record";
import { moveBounds, requireBoundsApproval } from "@/lib/limits/bounds";
import { CeilingError, requireReason } from "./errors";
import { lockCeilingAsSeen } from "./lock";
import { parseLimitInput } from "@/lib/limits/parse";
import { ceilingTarget } from "./target";
import { formatCount } from "@/lib/format";
import { clampPlanValues } from "@/lib/limits/plan-values";

export type SetBoundsParams = {
  ceilingId: number;
  min: string;
  max: string;
  expectedVersion: number;
  actor: AuditActor;
  reason: string;
  /** A raise (a max above the one in force, or a min that pulls the value up) needs one. */
  changeControl?: ChangeControl;
};

export type SetBoundsResult = {
  ceilingId: number;
  endpointKey: string;
  min: number;
  max: number;
  previousValue: number;
  value: number;
  valueClamped: boolean;
  version: number;
};

/**
 * Changes the [min, max] a ceiling may be set to. The value in force, the value remembered for a
 * restore and the default are pulled inside the new bounds in the same transaction, and logged.
 */
export async function setBounds(db: Db, p: SetBoundsParams): Promise<SetBoundsResult> {
  const min = parseLimitInput(p.min, "minimum");
  if (!min.ok) throw InputError.of(min.error);
  const max = parseLimitInput(p.max, "maximum");
  if (!max.ok) throw InputError.of(max.error);
  if (max.value === 0) throw InputError.of("the maximum must be above 0: 0 is the kill switch, not a bound");
  if (min.value > max.value) {
    throw InputError.of(`the minimum (${formatCount(min.value)}) must not be above the maximum (${formatCount(max.value)})`);
  }
  const reason = requireReason(p.reason);
  const bounds = { min: min.value, max: max.value };

  return db.transaction(async (tx) => {
    const { ceiling, endpoint } = await lockCeilingAsSeen(
      tx,
      p.ceilingId,
      p.expectedVersion,
      (now) => `someone else changed this ceiling first: bounds are now ${formatCount(now.minValue)}..${formatCount(now.maxValue)}. Nothing was saved`,
    );
    return writeBounds(tx, { ceiling, endpoint }, bounds, { actor: p.actor, reason, rawInput: `${p.min}..${p.max}`, changeControl: p.changeControl });
  });
}

export type BoundsEdit = { actor: AuditActor; reason: string; rawInput: string; changeControl?: ChangeControl };

/**
 * New bounds of a locked ceiling, with the value, the value a restore puts back and the default
 * pulled inside them, and the plans' values on it: what setBounds does after its lock, and what an
 * approved ceiling.bounds request applies.
 */
export async function writeBounds(
  tx: Db,
  { ceiling, endpoint }: { ceiling: Ceiling; endpoint: Endpoint },
  bounds: { min: number; max: number },
  p: BoundsEdit,
): Promise<SetBoundsResult> {
  if (ceiling.minValue === bounds.min && ceiling.maxValue === bounds.max) {
    throw new CeilingError("unchanged", "those are already the bounds: nothing to save");
  }
  const target = ceilingTarget(tx, ceiling, endpoint);
  const move = moveBounds(ceiling, bounds);
  await requireBoundsApproval(tx, target, move, p.changeControl);
  const version = await target.save({
    minValue: move.min,
    maxValue: move.max,
    value: move.value,
    valueBeforeKill: move.valueBeforeKill,
    defaultValue: move.defaultValue,
  });
  await target.audit(p, {
    verb: "bounds",
    rawInput: p.rawInput,
    previousValue: ceiling.value,
    appliedValue: move.value,
    clamped: move.valueClamped !== null,
    details: {
      before: { min: ceiling.minValue, max: ceiling.maxValue },
      after: bounds,
      ...(move.valueBeforeKill !== ceiling.valueBeforeKill ? { valueBeforeKill: { from: ceiling.valueBeforeKill, to: move.valueBeforeKill } } : {}),
      ...(move.defaultValue !== ceiling.defaultValue ? { defaultValue: { from: ceiling.defaultValue, to: move.defaultValue } } : {}),
    },
  });
  // The plans' values on this ceiling live inside its bounds too (each moved one logged).
  await clampPlanValues({ tx, actor: p.actor, reason: p.reason }, { kind: "ceiling", id: ceiling.id, limitId: ceiling.limitId, endpoint }, bounds);
  return {
    ceilingId: ceiling.id,
    endpointKey: endpoint.key,
    min: bounds.min,
    max: bounds.max,
    previousValue: ceiling.value,
    value: move.value,
    valueClamped: move.valueClamped !== null,
    version,
  };
}
