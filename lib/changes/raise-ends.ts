import { and, asc, eq, lte, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings, endpoints, raiseEnds, type RaiseEnd } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { fireAlert } from "@/lib/alerts/fire";
import { writeBudgetValue } from "@/lib/budgets/change";
import { moneyInputText } from "@/lib/budgets/money";
import { lockedBudget } from "@/lib/budgets/write";
import { writeCeilingValue } from "@/lib/ceilings/adjust";
import { lockCeiling } from "@/lib/ceilings/lock";
import { DomainError } from "@/lib/errors";
import { formatCount, formatMoney } from "@/lib/format";
import { logError } from "@/lib/log/redact";

// A temporary raise: the approval (or break glass) that applies a raise with an end records here,
// in its own transaction, what to put back. At the end the worker puts it back under the same
// locks a direct edit takes, unless anything was written to the ceiling (or budget) since the raise:
// its version is no longer the one recorded with the raise. Comparing the value alone is not enough:
// 100 → 150 (temporary), lowered to 120, then an approved permanent raise to 150 shows the raised
// value again, yet the end must not undo that later decision. Then nothing is reverted and an
// alert says so.

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
  await tx.update(raiseEnds).set({ state, resolvedAt: sql`now()`, resolvedNote: note }).where(eq(raiseEnds.id, due.id));
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

async function revertCeiling(tx: Db, due: RaiseEnd, details: Record<string, unknown>): Promise<Resolution> {
  const locked = await lockCeiling(tx, due.ceilingId ?? 0);
  const { ceiling, endpoint } = locked;
  const what = `${endpoint.key} ceiling #${ceiling.id}`;
  if (changedSince(due, ceiling)) return { outcome: "superseded", note: changedNote(what, ceiling.value, ceiling.valueBeforeKill, due, formatCount) };
  if (due.revertTo === due.raisedTo) return { outcome: "reverted", note: `${what} is already at ${formatCount(due.revertTo)}` };
  const applied = await writeCeilingValue(tx, locked, {
    input: String(due.revertTo),
    // A revert is a lowering; the retype a 5x change asks of a person does not apply to the system.
    confirm: String(due.revertTo),
    actor: RAISE_END_ACTOR,
    reason: `the temporary raise to ${formatCount(due.raisedTo)} ended`,
    details,
  });
  return { outcome: "reverted", note: `the temporary raise of ${what} ended: ${formatCount(due.raisedTo)} → ${formatCount(applied.applied)}` };
}

async function revertBudget(tx: Db, due: RaiseEnd, details: Record<string, unknown>): Promise<Resolution> {
  const [row] = await tx.select({ key: budgets.key }).from(budgets).where(eq(budgets.id, due.budgetId ?? 0));
  if (!row) return { outcome: "superseded", note: `budget #${due.budgetId} no longer exists: nothing reverted` };
  const { budget } = await lockedBudget(tx, row.key);
  const money = (n: number) => formatMoney(n, budget.currency);
  const what = `budget ${budget.key}`;
  if (changedSince(due, budget)) return { outcome: "superseded", note: changedNote(what, budget.value, budget.valueBeforeKill, due, money) };
  if (due.revertTo === due.raisedTo) return { outcome: "reverted", note: `${what} is already at ${money(due.revertTo)}` };
  const applied = await writeBudgetValue(tx, budget, {
    input: moneyInputText(due.revertTo),
    confirm: moneyInputText(due.revertTo),
    actor: RAISE_END_ACTOR,
    reason: `the temporary raise to ${money(due.raisedTo)} ended`,
    details,
  });
  return { outcome: "reverted", note: `the temporary raise of ${what} ended: ${money(due.raisedTo)} → ${money(applied.applied)}` };
}

/**
 * Whether anything was written to the ceiling (or budget) since the raise: every write bumps its
 * version. A row recorded without a version (none should be) falls back to comparing the value.
 */
function changedSince(due: RaiseEnd, row: { value: number; version: number }): boolean {
  if (row.value !== due.raisedTo) return true;
  return due.raisedVersion !== null && row.version !== due.raisedVersion;
}

/**
 * Why nothing was put back. A kill since counts as a change (the person who killed decides what
 * comes next): the value a restore would bring back is named, since it may still be the raised one.
 */
function changedNote(what: string, value: number, valueBeforeKill: number | null, due: RaiseEnd, show: (n: number) => string): string {
  const plan = `the temporary raise to ${show(due.raisedTo)} was to end by putting back ${show(due.revertTo)}`;
  if (value === 0) {
    const restore = valueBeforeKill === null ? "" : `; a restore would bring back ${show(valueBeforeKill)}${valueBeforeKill === due.raisedTo ? ", the raised value: lower it after restoring if the raise should end" : ""}`;
    return `${what} was killed meanwhile: nothing was reverted (${plan})${restore}`;
  }
  const now = value === due.raisedTo ? `changed meanwhile (it is at ${show(value)} again, by a later decision)` : `changed meanwhile to ${show(value)}`;
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
  /** False when the ceiling (or budget) was written since the raise: the end will revert nothing. */
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
      raisedVersion: raiseEnds.raisedVersion,
      current: sql<string | null>`coalesce(${ceilings.value}, ${budgets.value})`,
      version: sql<number | null>`coalesce(${ceilings.version}, ${budgets.version})`,
    })
    .from(raiseEnds)
    .leftJoin(endpoints, eq(endpoints.id, raiseEnds.endpointId))
    .leftJoin(ceilings, eq(ceilings.id, raiseEnds.ceilingId))
    .leftJoin(budgets, eq(budgets.id, raiseEnds.budgetId))
    .where(and(eq(raiseEnds.state, "active"), p.endpointId === undefined ? undefined : eq(raiseEnds.endpointId, p.endpointId)))
    .orderBy(asc(raiseEnds.endsAt), asc(raiseEnds.id));
  // Judged as endRaises judges it (changedSince): the raised value, and no write since.
  return rows.map(({ current, version, raisedVersion, ...r }) => ({
    ...r,
    inForce: current !== null && Number(current) === r.raisedTo && (raisedVersion === null || Number(version) === raisedVersion),
  }));
}
