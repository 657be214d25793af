import { and, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilingOverrides } from "@/db/schema";
import { lockAccounts } from "@/lib/limits/lock-accounts";
import { auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import { type ChangeControl, controlDetails, requireApproval } from "@/lib/control/context";
import { formatCount } from "@/lib/format";
import { planLimit } from "@/lib/limits/loosening";
import { CeilingError, requireReason } from "./errors";
import { parseCaller, recordRejectedInput } from "@/lib/limits/rejected";
import { lockCeiling } from "./lock";
import { clampToBounds, parseLimitInput, type Clamp } from "@/lib/limits/parse";

// Change control: an override above what binds the account now (its override, else its plan's
// value or the ceiling's own: ceilings.plan_limit) is a raise, asked as `ceiling.override`; so is
// removing an override below what its plan would give it. Lowering stays one person's.
// Both writers lock the account's row (lockAccounts, registering it if new) after the ceiling and
// before reading its override or plan: a plan move (assignPlans) locks the same row, so an override
// removal and a move to a looser plan, each no raise alone, cannot both commit on what the other
// has not written yet. Lock order: endpoint, ceiling, then the account (as reserve_batch: 1, 2, 3c).
export type SetOverrideParams = { ceilingId: number; caller: string; input: string; actor: AuditActor; reason: string; changeControl?: ChangeControl };
export type RemoveOverrideParams = { ceilingId: number; caller: string; actor: AuditActor; reason: string; changeControl?: ChangeControl };
export type OverrideResult = {
  ceilingId: number;
  endpointKey: string;
  caller: string;
  previous: number | null;
  applied: number | null;
  clamped: Clamp;
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
    throw new CeilingError("invalid_input", parsed.error);
  }
  const reason = requireReason(p.reason);

  return db.transaction(async (tx) => {
    // Locking the ceiling row makes the override bind the next reservation batch, like an edit.
    const { ceiling, endpoint } = await lockCeiling(tx, p.ceilingId);
    if (ceiling.scope !== "caller") {
      throw new CeilingError("not_per_caller", "overrides apply to per-caller ceilings only");
    }
    await lockAccounts(tx, [caller]);
    const { applied, clamped } = clampToBounds(parsed.value, { min: ceiling.minValue, max: ceiling.maxValue });
    const [existing] = await tx
      .select()
      .from(ceilingOverrides)
      .where(and(eq(ceilingOverrides.ceilingId, ceiling.id), eq(ceilingOverrides.caller, caller)));
    if (existing?.value === applied) throw new CeilingError("unchanged", `${caller} already has ${applied}: nothing to save`);
    const binding = existing?.value ?? (await planLimit(tx, { kind: "ceiling", limitId: ceiling.id, account: caller })) ?? ceiling.value;
    if (applied > binding) {
      requireApproval(
        p.changeControl,
        `an override of ${formatCount(applied)} for ${caller} on ${endpoint.key} #${ceiling.id} (${formatCount(binding)} binds it now)`,
        {
          kind: "ceiling.override",
          change: { ceilingId: ceiling.id, caller, value: applied },
        },
      );
    }
    const now = new Date();
    await tx
      .insert(ceilingOverrides)
      .values({ ceilingId: ceiling.id, caller, value: applied, reason })
      .onConflictDoUpdate({
        target: [ceilingOverrides.ceilingId, ceilingOverrides.caller],
        set: { value: applied, reason, updatedAt: now },
      });
    await recordAudit(tx, {
      ...auditOf(p.actor, endpoint, ceiling.id),
      action: "override.set",
      target: caller,
      rawInput: p.input,
      previousValue: existing?.value ?? null,
      appliedValue: applied,
      clamped: clamped !== null,
      reason,
      details: { ceilingValue: ceiling.value, clampedTo: clamped, ...controlDetails(p.changeControl) },
    });
    return { ceilingId: ceiling.id, endpointKey: endpoint.key, caller, previous: existing?.value ?? null, applied, clamped };
  });
}

/** Returns one billing account to the ceiling's own value. */
export async function removeOverride(db: Db, p: RemoveOverrideParams): Promise<OverrideResult> {
  const caller = parseCaller(p.caller);
  const reason = requireReason(p.reason);
  return db.transaction(async (tx) => {
    const { ceiling, endpoint } = await lockCeiling(tx, p.ceilingId);
    await lockAccounts(tx, [caller]);
    const [removed] = await tx
      .delete(ceilingOverrides)
      .where(and(eq(ceilingOverrides.ceilingId, ceiling.id), eq(ceilingOverrides.caller, caller)))
      .returning();
    if (!removed) throw new CeilingError("not_found", `${caller} has no override on this ceiling`);
    // Read after the delete, in the same transaction: what binds the account from its plan now.
    const plan = (await planLimit(tx, { kind: "ceiling", limitId: ceiling.id, account: caller })) ?? ceiling.value;
    if (plan > removed.value) {
      requireApproval(
        p.changeControl,
        `removing ${caller}'s override of ${formatCount(removed.value)} on ${endpoint.key} #${ceiling.id} (its plan gives it ${formatCount(plan)})`,
        {
          kind: "ceiling.override",
          change: { ceilingId: ceiling.id, caller, value: null },
        },
      );
    }
    await recordAudit(tx, {
      ...auditOf(p.actor, endpoint, ceiling.id),
      action: "override.remove",
      target: caller,
      previousValue: removed.value,
      appliedValue: null,
      clamped: false,
      reason,
      details: { ceilingValue: ceiling.value, ...controlDetails(p.changeControl) },
    });
    return { ceilingId: ceiling.id, endpointKey: endpoint.key, caller, previous: removed.value, applied: null, clamped: null };
  });
}
