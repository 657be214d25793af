import type { Db } from "@/db/client";
import { auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import { CeilingError, requireReason } from "./errors";
import { lockCeilingAsSeen, saveCeiling } from "./lock";
import { clampToBounds, parseLimitInput } from "./parse";
import { formatCount } from "@/lib/format";
import { clampPlanCeilingValues } from "@/lib/plans/clamp";

export type SetBoundsParams = {
  ceilingId: number;
  min: string;
  max: string;
  expectedVersion: number;
  actor: AuditActor;
  reason: string;
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
  if (!min.ok) throw new CeilingError("invalid_input", min.error);
  const max = parseLimitInput(p.max, "maximum");
  if (!max.ok) throw new CeilingError("invalid_input", max.error);
  if (max.value === 0) throw new CeilingError("invalid_input", "the maximum must be above 0: 0 is the kill switch, not a bound");
  if (min.value > max.value) {
    throw new CeilingError(
      "invalid_input",
      `the minimum (${formatCount(min.value)}) must not be above the maximum (${formatCount(max.value)})`,
    );
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
    if (ceiling.minValue === bounds.min && ceiling.maxValue === bounds.max) {
      throw new CeilingError("unchanged", "those are already the bounds: nothing to save");
    }
    const value = clampToBounds(ceiling.value, bounds);
    const beforeKill = ceiling.valueBeforeKill === null ? null : clampToBounds(ceiling.valueBeforeKill, bounds);
    // The default may be 0 only if the minimum is; otherwise it is pulled in like any value.
    const defaultValue = Math.min(Math.max(ceiling.defaultValue, bounds.min), bounds.max);

    const version = await saveCeiling(tx, ceiling.id, {
      minValue: bounds.min,
      maxValue: bounds.max,
      value: value.applied,
      valueBeforeKill: beforeKill?.applied ?? null,
      defaultValue,
    });

    await recordAudit(tx, {
      ...auditOf(p.actor, endpoint, ceiling.id),
      action: "ceiling.bounds",
      rawInput: `${p.min}..${p.max}`,
      previousValue: ceiling.value,
      appliedValue: value.applied,
      clamped: value.clamped !== null,
      reason,
      details: {
        before: { min: ceiling.minValue, max: ceiling.maxValue },
        after: bounds,
        ...(beforeKill?.clamped ? { valueBeforeKill: { from: ceiling.valueBeforeKill, to: beforeKill.applied } } : {}),
        ...(defaultValue !== ceiling.defaultValue ? { defaultValue: { from: ceiling.defaultValue, to: defaultValue } } : {}),
      },
    });
    // The plans' values on this ceiling live inside its bounds too (each moved one logged).
    await clampPlanCeilingValues({ tx, actor: p.actor, reason }, { id: ceiling.id, endpoint }, bounds);
    return {
      ceilingId: ceiling.id,
      endpointKey: endpoint.key,
      min: bounds.min,
      max: bounds.max,
      previousValue: ceiling.value,
      value: value.applied,
      valueClamped: value.clamped !== null,
      version,
    };
  });
}
