import { InputError } from "@/lib/errors";
import type { Db } from "@/db/client";
import { auditOf, recordAudit } from "@/lib/audit/record";
import { controlDetails } from "@/lib/control/context";
import { deleteLimitOverride, type OverrideInput, type OverrideRemoval, writeLimitOverride } from "@/lib/limits/overrides";
import { clampToBounds, parseLimitInput, type Clamp } from "@/lib/limits/parse";
import { parseCaller, recordRejectedInput } from "@/lib/limits/rejected";
import { CeilingError, requireReason } from "./errors";
import { lockCeiling } from "./lock";
import { ceilingTarget } from "./target";

// A per-caller ceiling's overrides, through the one writer of both kinds (lib/limits/overrides.ts,
// where change control and the lock order are said). Lock order: endpoint, ceiling, then the
// account (as reserve_batch: 1, then 3c).
export type SetOverrideParams = OverrideInput & { ceilingId: number };
export type RemoveOverrideParams = OverrideRemoval & { ceilingId: number };
export type OverrideResult = {
  ceilingId: number;
  endpointKey: string;
  caller: string;
  previous: number | null;
  applied: number | null;
  clamped: Clamp;
  /** When the override ends by itself (null: never). */
  expiresAt: Date | null;
};

/**
 * Gives one billing account its own value on a per-caller ceiling, inside the ceiling's bounds.
 * 0 blocks that account alone without killing the endpoint.
 */
export async function setOverride(db: Db, p: SetOverrideParams): Promise<OverrideResult> {
  const caller = parseCaller(p.caller);
  const parsed = parseLimitInput(p.input);
  if (!parsed.ok) {
    // Refused as typed, saved nowhere, but visible: an override attempt is audited like a value's.
    await recordRejectedInput(db, { kind: "ceiling", ceilingId: p.ceilingId }, p, parsed.error, { caller, override: true });
    throw InputError.of(parsed.error);
  }
  const reason = requireReason(p.reason);

  return db.transaction(async (tx) => {
    // Locking the ceiling row makes the override bind the next reservation batch, like an edit.
    const { ceiling, endpoint } = await lockCeiling(tx, p.ceilingId);
    if (ceiling.scope !== "caller") {
      throw new CeilingError("not_per_caller", "overrides apply to per-caller ceilings only");
    }
    const { applied, clamped } = clampToBounds(parsed.value, { min: ceiling.minValue, max: ceiling.maxValue });
    const { previous, expiresAt } = await writeLimitOverride(tx, ceilingTarget(tx, ceiling, endpoint), {
      caller,
      value: applied,
      reason,
      changeControl: p.changeControl,
      expiresAfterSeconds: p.expiresAfterSeconds,
    });
    await recordAudit(tx, {
      ...auditOf(p.actor, endpoint, ceiling.id),
      action: "override.set",
      target: caller,
      rawInput: p.input,
      previousValue: previous,
      appliedValue: applied,
      clamped: clamped !== null,
      reason,
      details: { ceilingValue: ceiling.value, clampedTo: clamped, expiresAt: expiresAt?.toISOString() ?? null, ...controlDetails(p.changeControl) },
    });
    return { ceilingId: ceiling.id, endpointKey: endpoint.key, caller, previous, applied, clamped, expiresAt };
  });
}

/** Returns one billing account to the ceiling's own value. */
export async function removeOverride(db: Db, p: RemoveOverrideParams): Promise<OverrideResult> {
  const caller = parseCaller(p.caller);
  const reason = requireReason(p.reason);
  return db.transaction(async (tx) => {
    const { ceiling, endpoint } = await lockCeiling(tx, p.ceilingId);
    const previous = await deleteLimitOverride(tx, ceilingTarget(tx, ceiling, endpoint), { caller, changeControl: p.changeControl });
    await recordAudit(tx, {
      ...auditOf(p.actor, endpoint, ceiling.id),
      action: "override.remove",
      target: caller,
      previousValue: previous,
      appliedValue: null,
      clamped: false,
      reason,
      details: { ceilingValue: ceiling.value, ...controlDetails(p.changeControl) },
    });
    return { ceilingId: ceiling.id, endpointKey: endpoint.key, caller, previous, applied: null, clamped: null, expiresAt: null };
  });
}
