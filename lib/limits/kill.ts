import { actorName } from "@/lib/audit/actor";
import { clampToBounds } from "./parse";
import type { LimitChange, LimitTarget } from "./target";

// The kill switch and its undo on a locked ceiling or budget, written once for both kinds. A kill
// is a value of 0 that remembers the value it replaced; a restore puts that back. Neither is a
// raise (a restore returns to what one person's kill took away), so neither asks for approval.

/**
 * Sets the limit to 0, remembering `restoreTo` (its value, unless the caller knows the one to put
 * back) for a restore. A limit already at 0 is left alone and false returned: killing twice must
 * not make a restore put back 0.
 */
export async function killLimit(target: LimitTarget, p: LimitChange, restoreTo: number = target.value): Promise<boolean> {
  if (target.value === 0) return false;
  const now = new Date();
  await target.save({ value: 0, valueBeforeKill: restoreTo, killedAt: now, killedBy: actorName(p.actor), updatedAt: now });
  await target.audit(p, { verb: "kill", previousValue: target.value, appliedValue: 0, clamped: false, details: { valueBeforeKill: restoreTo } });
  return true;
}

/**
 * What a restore of a killed limit puts back: the value from before its kill (its default if it had
 * none), inside the bounds in force, which may have moved since. 0: nothing to put back.
 */
export function restoreValue(target: Pick<LimitTarget, "valueBeforeKill" | "defaultValue" | "minValue" | "maxValue">): number {
  return clampToBounds(target.valueBeforeKill ?? target.defaultValue, { min: target.minValue, max: target.maxValue }).applied;
}

/**
 * Puts `applied` back on a killed limit (restoreValue, unless the caller names the value, as a
 * catalog file does); the audit row says whether it is not the remembered one. Returns false, and
 * writes nothing, when the limit is not at 0 or there is nothing to put back.
 */
export async function restoreLimit(target: LimitTarget, p: LimitChange, applied: number = restoreValue(target)): Promise<boolean> {
  if (target.value !== 0 || applied === 0) return false;
  await target.save({ value: applied, valueBeforeKill: null, killedAt: null, killedBy: null, updatedAt: new Date() });
  await target.audit(p, {
    verb: "restore",
    previousValue: 0,
    appliedValue: applied,
    clamped: applied !== (target.valueBeforeKill ?? target.defaultValue),
    details: { valueBeforeKill: target.valueBeforeKill, killedAt: target.killedAt?.toISOString() ?? null, killedBy: target.killedBy },
  });
  return true;
}
