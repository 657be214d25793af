import { InputError } from "@/lib/errors";
import type { Db } from "@/db/client";
import type { Ceiling, Endpoint } from "@/db/schema";
import { requireReason } from "./errors";
import { lockCeilingAsSeen } from "./lock";
import { parseLimitInput } from "@/lib/limits/parse";
import { type ValueResult, writeLimitValue } from "@/lib/limits/value";
import { ceilingTarget } from "./target";
import { formatCount } from "@/lib/format";
import { recordRejectedInput } from "@/lib/limits/rejected";
import type { AdjustLimitInput } from "@/lib/limits/adjust";

export type AdjustCeilingParams = AdjustLimitInput & { ceilingId: number };

/** What the value edit did (the kernel's ValueResult), on which ceiling. */
export type AdjustCeilingResult = ValueResult & { ceilingId: number; endpointKey: string };

/**
 * Changes one ceiling's value in one transaction with its audit row. 0 kills the ceiling (its
 * value is remembered for restore); a value on a killed ceiling is an explicit restore to it.
 */
export async function adjustCeiling(db: Db, p: AdjustCeilingParams): Promise<AdjustCeilingResult> {
  const parsed = parseLimitInput(p.input);
  if (!parsed.ok) {
    await recordRejectedInput(db, { kind: "ceiling", ceilingId: p.ceilingId }, p, parsed.error);
    throw InputError.of(parsed.error);
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
 * The value edit of a locked ceiling with its audit row (the kernel's writeLimitValue): what
 * adjustCeiling does after its lock, and what an approved ceiling.value request, a schedule and a
 * raise's end apply.
 */
export async function writeCeilingValue(
  tx: Db,
  { ceiling, endpoint }: { ceiling: Ceiling; endpoint: Endpoint },
  p: CeilingValueEdit,
): Promise<AdjustCeilingResult> {
  return { ceilingId: ceiling.id, endpointKey: endpoint.key, ...(await writeLimitValue(ceilingTarget(tx, ceiling, endpoint), p)) };
}
