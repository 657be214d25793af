import { and, asc, eq, lte, sql, type SQL } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { budgets, endpoints, raiseEnds, type Budget, type Ceiling, type Endpoint, type RaiseEnd } from "@/db/schema";
import { type AuditActor, auditOf, recordAudit } from "@/lib/audit/record";
import { fireAlert } from "@/lib/alerts/fire";
import { updateBudgetFields } from "@/lib/budgets/update";
import { writeBudgetValue } from "@/lib/budgets/adjust";
import { readBudget } from "@/lib/budgets/read";
import { BudgetFields } from "@/lib/budgets/spec";
import { moneyInputText } from "@/lib/limits/parse";
import { lockedBudget, recordBudgetChange, saveBudget } from "@/lib/budgets/write";
import { writeCeilingValue } from "@/lib/ceilings/adjust";
import { writeBounds } from "@/lib/ceilings/bounds";
import { lockCeiling, saveCeiling } from "@/lib/ceilings/lock";
import { DomainError } from "@/lib/errors";
import { formatCount, formatMoney } from "@/lib/format";
import { logError } from "@/lib/log/redact";

// A temporary raise: the approval (or break glass) that applies a raise with an end records here,
// in its own transaction, what to put back. At the end the worker puts it back under the same
// locks a direct edit takes. One person may not make the raise permanent: a lowering meanwhile (to
// 149 from 150, say), a kill and a restore are one person's edits, so the end still comes and puts
// back the lower of `revert_to` and what is in force (on a killed row, the value a restore brings
// back). Only a later decision taken by two people supersedes it: a change request applied to the
// same ceiling or budget after the raise (approved, break glass, or an approved schedule's run), as
// its audit rows say (`details.requestId`). 100 → 150 for an hour, lowered to 120, then a permanent
// 120 → 150 approved: the end leaves 150, and an alert says so.
//
// A bound set meanwhile never defeats the end: a min above revert_to is a raise while the end is
// active (isBoundsRaise's `revertTo`), so one person cannot set it, and an approved one is a
// decision that supersedes the end. Should one be there anyway (set before this rule), the end
// lowers the min to the value it puts back, in the same transaction, audited as the raise end's
// own bounds change (ceiling.bounds, budget.update), rather than let the revert be clamped away.

/** Who the audit log names for a revert: no person pressed anything. */
export const RAISE_END_ACTOR: AuditActor = { type: "system", name: "raise end" };

/** How many due raise ends one pass resolves: the fast lane stays short; the rest wait a second. */
const PER_PASS = 50;

export type RecordRaiseEndParams = {
  requestId: number | null;
  endpointId: number | null;
  ceilingId?: number | null;
  budgetId?: number | null;
  revertTo: number;
  raisedTo: number;
  /** The ceiling's (or budget's) version right after the raise was written (writeCeilingValue / writeBudgetValue return it). */
  raisedVersion: number;
  endsAt: Date;
  createdBy: string;
};

/** Remembers a raise's end; call it in the transaction that applies the raise. Returns its id. */
export async function recordRaiseEnd(tx: Db, p: RecordRaiseEndParams): Promise<number> {
  const [row] = await tx
    .insert(raiseEnds)
    .values({
      requestId: p.requestId,
      endpointId: p.endpointId,
      ceilingId: p.ceilingId ?? null,
      budgetId: p.budgetId ?? null,
      revertTo: p.revertTo,
      raisedTo: p.raisedTo,
      raisedVersion: p.raisedVersion,
      endsAt: p.endsAt,
      createdBy: p.createdBy,
    })
    .returning({ id: raiseEnds.id });
  if (!row) throw new Error("raise end not recorded");
  return row.id;
}

type Outcome = "reverted" | "superseded";

/**
 * Resolves every raise end due by `now`, each in its own transaction: the row is claimed FOR UPDATE
 * SKIP LOCKED (several workers never resolve one twice), then the ceiling or budget is locked as a
 * direct edit locks it, so the revert waits for reservation batches in flight and binds the next.
 */
export async function endRaises(db: Db, now: Date = new Date()): Promise<{ reverted: number; skipped: number }> {
  const counts = { reverted: 0, skipped: 0 };
  for (let i = 0; i < PER_PASS; i += 1) {
    const outcome = await db.transaction(async (tx) => {
      const [due] = await tx
        .select()
        .from(raiseEnds)
        .where(and(eq(raiseEnds.state, "active"), lte(raiseEnds.endsAt, now)))
        .orderBy(asc(raiseEnds.endsAt), asc(raiseEnds.id))
        .limit(1)
        .for("update", { skipLocked: true });
      if (!due) return null;
      return resolveRaiseEnd(tx, due);
    });
    if (outcome === null) break;
    if (outcome === "reverted") counts.reverted += 1;
    else counts.skipped += 1;
  }
  return counts;
}

async function resolveRaiseEnd(tx: Db, due: RaiseEnd): Promise<Outcome> {
  const details = { raiseEndId: due.id, requestId: due.requestId };
  try {
    // A savepoint: a revert refused by the verb (bounds, a deleted row) rolls back alone, and the
    // raise end is still resolved below, so it is not retried every second.
    const result = await tx.transaction((sp) => (due.ceilingId !== null ? revertCeiling(sp, due, details) : revertBudget(sp, due, details)));
    await resolve(tx, due, result.outcome, result.note);
    if (result.outcome === "reverted") {
      await fireAlert(tx, {
        kind: "raise_reverted",
        dedupeKey: `raise_reverted:${due.id}`,
        endpointId: due.endpointId,
        ceilingId: due.ceilingId,
        message: result.note,
        details: { ...details, budgetId: due.budgetId, revertTo: due.revertTo, raisedTo: due.raisedTo },
      });
    } else {
      await skipped(tx, due, result.note);
    }
    return result.outcome;
  } catch (error) {
    if (!(error instanceof DomainError)) logError(`raise end #${due.id} could not be reverted`, error);
    const note = `the temporary raise could not be put back: ${error instanceof DomainError ? error.message : "an unexpected error (logged)"}`;
    await resolve(tx, due, "superseded", note);
    await skipped(tx, due, note);
    return "superseded";
  }
}

async function resolve(tx: Db, due: RaiseEnd, state: Outcome, note: string): Promise<void> {
  await tx
    .update(raiseEnds)
    .set({ state, resolvedAt: sql`now()`, resolvedNote: note })
    .where(eq(raiseEnds.id, due.id));
}

/** Once per raise end (its id is the dedupe key): staff decide whether the raise should stay. */
async function skipped(tx: Db, due: RaiseEnd, note: string): Promise<void> {
  await fireAlert(tx, {
    kind: "revert_skipped",
    dedupeKey: `revert_skipped:${due.id}`,
    endpointId: due.endpointId,
    ceilingId: due.ceilingId,
    message: note,
    details: { raiseEndId: due.id, requestId: due.requestId, budgetId: due.budgetId, revertTo: due.revertTo, raisedTo: due.raisedTo },
  });
}

type Resolution = { outcome: Outcome; note: string };

/**
 * A decision by two people on the raised row since the raise: an audit row of a write to it, after
 * the raise was recorded, carrying a request id other than the raise's own. Only such a decision
 * supersedes the end; a direct edit (a lowering, a kill, a restore) never does, nor a request's own
 * life (change.request, change.reject, ...: asking is not deciding) or a schedule's bookkeeping.
 */
function decidedSince(due: Pick<RaiseEnd, "ceilingId" | "budgetId" | "requestId" | "createdAt">): SQL {
  const target = due.ceilingId !== null ? sql`a.ceiling_id = ${due.ceilingId}` : sql`a.details->>'budgetId' = ${String(due.budgetId ?? 0)}`;
  const own = due.requestId === null ? sql`true` : sql`a.details->>'requestId' <> ${String(due.requestId)}`;
  return sql`exists (select 1 from audit_events a where ${target} and a.at >= ${due.createdAt.toISOString()}::timestamptz and a.details->>'requestId' is not null and ${own}
    and a.action not like 'change.%' and a.action not like 'schedule.%')`;
}

async function supersededByDecision(tx: Db, due: Pick<RaiseEnd, "ceilingId" | "budgetId" | "requestId" | "createdAt">): Promise<boolean> {
  const [row] = resultRows<{ decided: boolean }>(await tx.execute(sql`select ${decidedSince(due)} as decided`));
  return row?.decided === true;
}

/** What the end puts back: never above what is in force now, never above what stood before the raise. */
const putBack = (due: RaiseEnd, standing: number) => Math.min(due.revertTo, standing);

async function revertCeiling(tx: Db, due: RaiseEnd, details: Record<string, unknown>): Promise<Resolution> {
  const locked = await lockCeiling(tx, due.ceilingId ?? 0);
  const { ceiling, endpoint } = locked;
  const what = `${endpoint.key} ceiling #${ceiling.id}`;
  if (await supersededByDecision(tx, due)) return { outcome: "superseded", note: changedNote(what, ceiling.value, ceiling.valueBeforeKill, due, formatCount) };
  const reason = `the temporary raise to ${formatCount(due.raisedTo)} ended`;
  if (ceiling.value === 0) {
    // Killed meanwhile: it stays killed; what a restore brings back is lowered to the value from before the raise.
    const remembered = ceiling.valueBeforeKill;
    if (remembered === null || remembered <= due.revertTo)
      return { outcome: "reverted", note: `${what} is killed; a restore brings back ${formatCount(remembered ?? ceiling.defaultValue)}: nothing to put back` };
    const target = putBack(due, remembered);
    await lowerCeilingMin(tx, locked, target, reason);
    await saveCeiling(tx, ceiling.id, { valueBeforeKill: target });
    await recordAudit(tx, {
      ...auditOf(RAISE_END_ACTOR, endpoint, ceiling.id),
      action: "ceiling.update",
      previousValue: 0,
      appliedValue: 0,
      clamped: false,
      reason,
      details: { changes: { valueBeforeKill: { before: remembered, after: target } }, ...details },
    });
    return {
      outcome: "reverted",
      note: `the temporary raise of ${what} ended while it is killed: a restore now brings back ${formatCount(target)}, not ${formatCount(remembered)}`,
    };
  }
  const target = putBack(due, ceiling.value);
  if (target === ceiling.value) return { outcome: "reverted", note: `${what} is already at ${formatCount(ceiling.value)}` };
  const lowered = await lowerCeilingMin(tx, locked, target, reason);
  const applied = await writeCeilingValue(tx, lowered, {
    input: String(target),
    // A revert is a lowering; the retype a 5x change asks of a person does not apply to the system.
    confirm: String(target),
    actor: RAISE_END_ACTOR,
    reason,
    details,
  });
  const minNote =
    lowered.ceiling.minValue < ceiling.minValue ? ` (its min lowered ${formatCount(ceiling.minValue)} → ${formatCount(lowered.ceiling.minValue)} with it)` : "";
  return { outcome: "reverted", note: `the temporary raise of ${what} ended: ${formatCount(ceiling.value)} → ${formatCount(applied.applied)}${minNote}` };
}

/**
 * A min above the value the end puts back, lowered to it (audited as ceiling.bounds by the raise
 * end) so the revert is not clamped back up; the ceiling as it is then, still locked.
 */
async function lowerCeilingMin(
  tx: Db,
  locked: { ceiling: Ceiling; endpoint: Endpoint },
  target: number,
  reason: string,
): Promise<{ ceiling: Ceiling; endpoint: Endpoint }> {
  const { ceiling } = locked;
  if (target >= ceiling.minValue) return locked;
  await writeBounds(
    tx,
    locked,
    { min: target, max: ceiling.maxValue },
    { actor: RAISE_END_ACTOR, reason: `${reason}: the min set meanwhile is lowered to the value put back`, rawInput: `${target}..${ceiling.maxValue}` },
  );
  return lockCeiling(tx, ceiling.id);
}

async function revertBudget(tx: Db, due: RaiseEnd, details: Record<string, unknown>): Promise<Resolution> {
  const [row] = await tx
    .select({ key: budgets.key })
    .from(budgets)
    .where(eq(budgets.id, due.budgetId ?? 0));
  if (!row) return { outcome: "superseded", note: `budget #${due.budgetId} no longer exists: nothing reverted` };
  const { budget } = await lockedBudget(tx, row.key);
  const money = (n: number) => formatMoney(n, budget.currency);
  const what = `budget ${budget.key}`;
  if (await supersededByDecision(tx, due)) return { outcome: "superseded", note: changedNote(what, budget.value, budget.valueBeforeKill, due, money) };
  const reason = `the temporary raise to ${money(due.raisedTo)} ended`;
  if (budget.value === 0) {
    const remembered = budget.valueBeforeKill;
    if (remembered === null || remembered <= due.revertTo)
      return { outcome: "reverted", note: `${what} is killed; a restore brings back ${money(remembered ?? budget.defaultValue)}: nothing to put back` };
    const target = putBack(due, remembered);
    await lowerBudgetMin(tx, budget, target, reason, details);
    await saveBudget(tx, budget.id, { valueBeforeKill: target });
    await recordBudgetChange({ tx, actor: RAISE_END_ACTOR, reason, details }, budget, {
      action: "budget.update",
      previousValue: 0,
      appliedValue: 0,
      clamped: false,
      details: { changes: { valueBeforeKill: { before: remembered, after: target } } },
    });
    return {
      outcome: "reverted",
      note: `the temporary raise of ${what} ended while it is killed: a restore now brings back ${money(target)}, not ${money(remembered)}`,
    };
  }
  const target = putBack(due, budget.value);
  if (target === budget.value) return { outcome: "reverted", note: `${what} is already at ${money(budget.value)}` };
  const lowered = await lowerBudgetMin(tx, budget, target, reason, details);
  const applied = await writeBudgetValue(tx, lowered, {
    input: moneyInputText(target),
    confirm: moneyInputText(target),
    actor: RAISE_END_ACTOR,
    reason,
    details,
  });
  const minNote = lowered.minValue < budget.minValue ? ` (its min lowered ${money(budget.minValue)} → ${money(lowered.minValue)} with it)` : "";
  return { outcome: "reverted", note: `the temporary raise of ${what} ended: ${money(budget.value)} → ${money(applied.applied)}${minNote}` };
}

/** lowerCeilingMin for a budget: audited as budget.update by the raise end; the budget as it is then, still locked. */
async function lowerBudgetMin(tx: Db, budget: Budget, target: number, reason: string, details: Record<string, unknown>): Promise<Budget> {
  if (target >= budget.minValue) return budget;
  const { spec } = await readBudget(tx, budget.key);
  const fields = BudgetFields.parse({
    name: spec.name,
    members: spec.members,
    alertThresholds: spec.alertThresholds,
    min: target,
    max: spec.max,
    default: spec.default,
  });
  await updateBudgetFields(
    { tx, actor: RAISE_END_ACTOR, reason: `${reason}: the min set meanwhile is lowered to the value put back`, details },
    budget.key,
    fields,
  );
  return (await lockedBudget(tx, budget.key)).budget;
}

/**
 * Why nothing was put back: a change request was applied to it since the raise (two people
 * decided). A restore of a killed one is named, since it may bring back the raised value.
 */
function changedNote(what: string, value: number, valueBeforeKill: number | null, due: RaiseEnd, show: (n: number) => string): string {
  const plan = `the temporary raise to ${show(due.raisedTo)} was to end by putting back ${show(due.revertTo)}`;
  if (value === 0) {
    const restore = valueBeforeKill === null ? "" : `; a restore would bring back ${show(valueBeforeKill)}`;
    return `${what} is killed, and a later change request on it was approved: nothing was reverted (${plan})${restore}`;
  }
  const now =
    value === due.raisedTo ? `changed by a later approved request (it is at ${show(value)} again)` : `changed by a later approved request to ${show(value)}`;
  return `${what} was ${now}: nothing was reverted (${plan}). Lower it by hand if the raise should end`;
}

export type ActiveRaiseEnd = {
  id: number;
  requestId: number | null;
  endpointId: number | null;
  endpointKey: string | null;
  ceilingId: number | null;
  budgetId: number | null;
  revertTo: number;
  raisedTo: number;
  endsAt: Date;
  createdBy: string;
  /** False when a change request was applied to the ceiling (or budget) since the raise: the end will revert nothing. */
  inForce: boolean;
};

/** The raise ends still to come, soonest first: for the countdown on a ceiling (or a budget). */
export async function activeRaiseEnds(db: Db, p: { endpointId?: number } = {}): Promise<ActiveRaiseEnd[]> {
  const rows = await db
    .select({
      id: raiseEnds.id,
      requestId: raiseEnds.requestId,
      endpointId: raiseEnds.endpointId,
      endpointKey: endpoints.key,
      ceilingId: raiseEnds.ceilingId,
      budgetId: raiseEnds.budgetId,
      revertTo: raiseEnds.revertTo,
      raisedTo: raiseEnds.raisedTo,
      endsAt: raiseEnds.endsAt,
      createdBy: raiseEnds.createdBy,
      createdAt: raiseEnds.createdAt,
    })
    .from(raiseEnds)
    .leftJoin(endpoints, eq(endpoints.id, raiseEnds.endpointId))
    .where(and(eq(raiseEnds.state, "active"), p.endpointId === undefined ? undefined : eq(raiseEnds.endpointId, p.endpointId)))
    .orderBy(asc(raiseEnds.endsAt), asc(raiseEnds.id));
  // Judged as endRaises judges it: only a change request applied since supersedes the end.
  return Promise.all(rows.map(async ({ createdAt, ...r }) => ({ ...r, inForce: !(await supersededByDecision(db, { ...r, createdAt })) })));
}
