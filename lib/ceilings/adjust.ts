import type { Db } from "@/db/client";
import type { Ceiling, Endpoint } from "@/db/schema";
import { controlDetails, requireApproval } from "@/lib/control/context";
import { isValueRaise } from "@/lib/control/raise";
import { auditOf, recordAudit } from "@/lib/audit/record";
import { actorName } from "@/lib/audit/actor";
import { CeilingError, requireReason } from "./errors";
import { lockCeilingAsSeen, saveCeiling } from "./lock";
import { parseLimitInput, previewAdjustment, type AdjustmentKind, type Clamp } from "@/lib/limits/parse";
import { formatCount } from "@/lib/format";
import { recordRejectedInput } from "@/lib/limits/rejected";
import type { AdjustLimitInput } from "@/lib/limits/adjust";

export type AdjustCeilingParams = AdjustLimitInput & { ceilingId: number };

export type AdjustCeilingResult = {
  ceilingId: number;
  endpointKey: string;
  kind: Exclude<AdjustmentKind, "unchanged">;
  previous: number;
  applied: number;
  clamped: Clamp;
  version: number;
  message: string;
};

/**
 * Changes one ceiling's value in one transaction with its audit row. 0 kills the ceiling (its
 * value is remembered for restore); a value on a killed ceiling is an explicit restore to it.
 */
export async function adjustCeiling(db: Db, p: AdjustCeilingParams): Promise<AdjustCeilingResult> {
  const parsed = parseLimitInput(p.input);
  if (!parsed.ok) {
    await recordRejectedInput(db, { kind: "ceiling", ceilingId: p.ceilingId }, p, parsed.error);
    throw new CeilingError("invalid_input", parsed.error);
  }
  const reason = requireReason(p.reason);

  return db.transaction(async (tx) => {
    const locked = await lockCeilingAsSeen(
      tx,
      p.ceilingId,
      p.expectedVersion,
      (now) => `someone else changed this ceiling first: it is now ${formatCount(now.value)}. Nothing was saved; review and try again`,
    );
    return writeCeilingValue(tx, locked, { ...p, reason });
  });
}

export type CeilingValueEdit = Pick<AdjustCeilingParams, "input" | "actor" | "reason" | "confirm" | "changeControl"> & {
  /** Joins the audit row's details: the schedule or the raise end that made the change. */
  details?: Record<string, unknown>;
};

/**
 * The value edit of a locked ceiling with its audit row: what adjustCeiling does after its lock,
 * and what an approved ceiling.value request applies (lib/changes/apply.ts). A raise needs a
 * ChangeControl; a lowering, a kill and a restore to the value from before the kill do not.
 */
export async function writeCeilingValue(
  tx: Db,
  { ceiling, endpoint }: { ceiling: Ceiling; endpoint: Endpoint },
  p: CeilingValueEdit,
): Promise<AdjustCeilingResult> {
  const preview = previewAdjustment({
    raw: p.input,
    current: ceiling.value,
    valueBeforeKill: ceiling.valueBeforeKill,
    min: ceiling.minValue,
    max: ceiling.maxValue,
  });
  if (!preview.ok) throw new CeilingError("invalid_input", preview.error);
  if (preview.kind === "unchanged") throw new CeilingError("unchanged", preview.message);
  if (preview.needsConfirmation) {
    const confirm = parseLimitInput(p.confirm ?? "");
    if (!confirm.ok || confirm.value !== preview.typed) {
      throw new CeilingError("confirmation_required", `${preview.message}. The confirmation must be exactly ${formatCount(preview.typed)}`);
    }
  }
  if (isValueRaise(ceiling, preview.applied)) {
    requireApproval(p.changeControl, `${endpoint.key} #${ceiling.id} ${formatCount(ceiling.value)} → ${formatCount(preview.applied)}`, {
      kind: "ceiling.value",
      change: { ceilingId: ceiling.id, value: preview.typed },
    });
  }

  const kind = preview.kind;
  const now = new Date();
  const killFields =
    kind === "kill"
      ? { valueBeforeKill: ceiling.value, killedAt: now, killedBy: actorName(p.actor) }
      : { valueBeforeKill: null, killedAt: null, killedBy: null };
  const version = await saveCeiling(tx, ceiling.id, { value: preview.applied, ...killFields, updatedAt: now });

  await recordAudit(tx, {
    ...auditOf(p.actor, endpoint, ceiling.id),
    action: kind === "kill" ? "ceiling.kill" : kind === "restore" ? "ceiling.restore" : "ceiling.adjust",
    rawInput: p.input,
    previousValue: ceiling.value,
    appliedValue: preview.applied,
    clamped: preview.clamped !== null,
    reason: p.reason,
    details: {
      kind,
      typed: preview.typed,
      clampedTo: preview.clamped,
      bounds: { min: ceiling.minValue, max: ceiling.maxValue },
      ...(kind === "restore" ? { valueBeforeKill: ceiling.valueBeforeKill } : {}),
      ...controlDetails(p.changeControl),
      ...p.details,
    },
  });
  return {
    ceilingId: ceiling.id,
    endpointKey: endpoint.key,
    kind,
    previous: ceiling.value,
    applied: preview.applied,
    clamped: preview.clamped,
    version,
    message: preview.message,
  };
}
