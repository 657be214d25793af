import { InputError } from "@/lib/errors";
import type { Db } from "@/db/client";
import type { ChangeRequest } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { approvalControl } from "@/lib/control/context";
import { isChangeKind } from "./types";

import { kindHandlers } from "./kinds";
import { recordRaiseEnd } from "./raise-ends";

// Applies an approved (or break-glass) request inside the caller's transaction: the kind's applier
// takes the direct edit's locks, compares `before` with what is in force and writes through the
// direct edit's own code with the request's ChangeControl; a value raise with an end is handed to
// the raise ends (lib/changes/raise-ends.ts) in the same transaction.

export type ApplyOutcome = { applied: true; raiseEndId: number | null } | { applied: false; message: string };

/** When the raise ends, counted from `now` (its application) or the time asked for. */
export function endOf(r: Pick<ChangeRequest, "endsAfterSeconds" | "endsAt">, now: Date): Date | null {
  if (r.endsAt) return r.endsAt;
  if (r.endsAfterSeconds) return new Date(now.getTime() + r.endsAfterSeconds * 1000);
  return null;
}

export async function applyRequest(tx: Db, request: ChangeRequest, actor: AuditActor, now: Date): Promise<ApplyOutcome> {
  if (!isChangeKind(request.kind)) throw InputError.of(`request #${request.id} has an unknown kind '${request.kind}'`);
  const endsAt = endOf(request, now);
  // An end asked as a time must still be ahead when the raise is applied.
  if (endsAt && endsAt.getTime() <= now.getTime()) {
    return { applied: false, message: `its end (${endsAt.toISOString()}) has passed: nothing was applied; ask again with a new end` };
  }
  const result = await kindHandlers[request.kind].apply({ tx, request, actor, control: approvalControl(request) });
  if (result.stale !== null) return { applied: false, message: result.stale };
  let raiseEndId: number | null = null;
  if (endsAt && result.raised) {
    raiseEndId = await recordRaiseEnd(tx, {
      requestId: request.id,
      endpointId: result.raised.endpointId,
      ...(result.raised.ceilingId !== undefined ? { ceilingId: result.raised.ceilingId } : {}),
      ...(result.raised.budgetId !== undefined ? { budgetId: result.raised.budgetId } : {}),
      revertTo: result.raised.revertTo,
      raisedTo: result.raised.raisedTo,
      raisedVersion: result.raised.raisedVersion,
      endsAt,
      createdBy: request.requestedBy,
    });
  }
  return { applied: true, raiseEndId };
}
