import { and, asc, eq, lte } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, changeRequests, endpoints, scheduledChanges, type ScheduledChange } from "@/db/schema";
import { fireAlert } from "@/lib/alerts/fire";
import { auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import { writeCeilingValue } from "@/lib/ceilings/adjust";
import { clampToBounds } from "@/lib/limits/parse";
import { killCeilings, restoreCeilings } from "@/lib/ceilings/kill";
import { lockCeiling, lockCeilings } from "@/lib/ceilings/lock";
import { DomainError } from "@/lib/errors";
import { formatCount } from "@/lib/format";
import { logError } from "@/lib/log/redact";
import { type ChangeControl, scheduleControl } from "@/lib/control/context";
import { standingValue } from "./schedule-standing";
import { nextDailyRun } from "./schedule-time";

// The worker's side of schedules: each due row is claimed FOR UPDATE SKIP LOCKED and applied in the
// same transaction that moves it on (done, or a day later), so with several workers a schedule runs
// exactly once per time. The change itself is the direct verb's own write, under its locks.

/** Who the audit log names for a scheduled change: the person who scheduled it is in the details. */
export const SCHEDULE_ACTOR = { type: "system", name: "schedule" } as const satisfies AuditActor;

/** How many due schedules one pass applies: the fast lane stays short; the rest wait a second. */
const PER_PASS = 50;

/** Outcomes that mean "already so": the run counts, nothing is alerted. */
const NOTHING_TO_DO = new Set(["unchanged", "already_killed", "not_killed"]);

type Outcome = { state: "applied" | "nothing" | "failed"; note: string };

export async function runDueSchedules(db: Db, now: Date = new Date()): Promise<{ applied: number; nothing: number; failed: number }> {
  const counts = { applied: 0, nothing: 0, failed: 0 };
  for (let i = 0; i < PER_PASS; i += 1) {
    const outcome = await db.transaction(async (tx) => {
      const [due] = await tx
        .select()
        .from(scheduledChanges)
        .where(and(eq(scheduledChanges.state, "scheduled"), lte(scheduledChanges.runAt, now)))
        .orderBy(asc(scheduledChanges.runAt), asc(scheduledChanges.id))
        .limit(1)
        .for("update", { skipLocked: true });
      if (!due) return null;
      return runOne(tx, due, now);
    });
    if (outcome === null) break;
    counts[outcome.state] += 1;
  }
  return counts;
}

async function runOne(tx: Db, s: ScheduledChange, now: Date): Promise<Outcome> {
  let outcome: Outcome;
  try {
    // A savepoint: a change the verb refuses rolls back alone; the schedule still moves on below,
    // so it is not retried every second.
    outcome = await tx.transaction((sp) => applySchedule(sp, s));
  } catch (error) {
    if (error instanceof DomainError && NOTHING_TO_DO.has(error.code)) outcome = { state: "nothing", note: `nothing to do: ${error.message}` };
    else {
      if (!(error instanceof DomainError)) logError(`schedule #${s.id} failed`, error);
      outcome = { state: "failed", note: `failed: ${error instanceof DomainError ? error.message : "an unexpected error (logged)"}` };
    }
  }
  const next = s.repeat === "daily" ? nextDailyRun(s.runAt, now) : null;
  await tx
    .update(scheduledChanges)
    .set({ runs: s.runs + 1, lastRunAt: now, lastOutcome: outcome.note.slice(0, 500), ...(next ? { runAt: next } : { state: "done" }) })
    .where(eq(scheduledChanges.id, s.id));
  const [endpoint] = await tx.select({ id: endpoints.id, key: endpoints.key }).from(endpoints).where(eq(endpoints.id, s.endpointId));
  await recordAudit(tx, {
    ...(endpoint ? auditOf(SCHEDULE_ACTOR, endpoint, s.ceilingId ?? undefined) : { actorType: "system" as const, actor: SCHEDULE_ACTOR.name }),
    action: "schedule.apply",
    appliedValue: s.value,
    reason: s.reason,
    details: {
      scheduleId: s.id,
      scheduledBy: s.createdBy,
      requestId: s.requestId,
      action: s.action,
      runAt: s.runAt.toISOString(),
      outcome: outcome.state,
      note: outcome.note,
      nextRunAt: next?.toISOString() ?? null,
    },
  });
  if (outcome.state === "failed") {
    await fireAlert(tx, {
      kind: "schedule_failed",
      dedupeKey: `schedule_failed:${s.id}:${s.runAt.toISOString()}`,
      endpointId: s.endpointId,
      ceilingId: s.ceilingId,
      message: `${endpoint?.key ?? `endpoint #${s.endpointId}`}: the scheduled ${s.action} #${s.id} ${outcome.note}`,
      details: { scheduleId: s.id, action: s.action, runAt: s.runAt.toISOString() },
    });
  }
  return outcome;
}

/** The direct verb's write for the schedule's action, under the locks it takes. */
async function applySchedule(tx: Db, s: ScheduledChange): Promise<Outcome> {
  const details = { scheduleId: s.id, scheduledBy: s.createdBy, ...(s.requestId ? { requestId: s.requestId } : {}) };
  const reason = `scheduled: ${s.reason}`.slice(0, 500);
  if (s.action === "value") return applyValue(tx, s, { reason, details });
  const rows = await lockCeilings(tx, s.ceilingId === null ? eq(ceilings.endpointId, s.endpointId) : eq(ceilings.id, s.ceilingId));
  const [endpoint] = await tx.select().from(endpoints).where(eq(endpoints.id, s.endpointId));
  if (!endpoint || rows.length === 0) return { state: "failed", note: "failed: its endpoint or ceiling no longer exists" };
  if (s.action === "kill") {
    const changes = await killCeilings(tx, endpoint, rows, SCHEDULE_ACTOR, reason, "schedule", details);
    if (changes.length === 0) return { state: "nothing", note: "nothing to do: already killed" };
    return { state: "applied", note: `killed ${changes.length} ceiling${changes.length === 1 ? "" : "s"}` };
  }
  const changes = await restoreCeilings(tx, endpoint, rows, SCHEDULE_ACTOR, reason, details);
  return { state: "applied", note: `restored ${changes.map((c) => formatCount(c.applied)).join(", ")}` };
}

/**
 * A scheduled value, judged again on the day it runs (docs/change-control.md, Schedules):
 * - on a killed ceiling nothing is applied: whoever killed decides what comes next, not a schedule
 *   made before the kill (a value on a killed ceiling would be a restore);
 * - a value above the standing value (schedule-standing.ts) applies only with the schedule's own
 *   approved request, and never above the value approved; without one nothing is applied;
 * - a lower value always applies, as the direct edit would.
 * A refusal is a failed run: schedule_failed says so, once per run.
 */
async function applyValue(tx: Db, s: ScheduledChange, p: { reason: string; details: Record<string, unknown> }): Promise<Outcome> {
  const locked = await lockCeiling(tx, s.ceilingId ?? 0);
  const { ceiling } = locked;
  const scheduled = s.value ?? 0;
  if (ceiling.value === 0) {
    if (scheduled === 0) return { state: "nothing", note: "nothing to do: already killed" };
    return {
      state: "failed",
      note: "did nothing: the ceiling is killed, and whoever killed decides what comes next (restore it; the schedule runs again at its next time)",
    };
  }
  const { applied } = clampToBounds(scheduled, { min: ceiling.minValue, max: ceiling.maxValue });
  const standing = await standingValue(tx, ceiling);
  let control: ChangeControl | undefined;
  if (applied > standing) {
    if (!(await approvedRequest(tx, s))) {
      return {
        state: "failed",
        note: `did nothing: ${formatCount(standing)} → ${formatCount(applied)} is a raise and needs a second admin's approval (schedule it again to ask)`,
      };
    }
    if (applied > scheduled)
      return { state: "failed", note: `did nothing: the bounds would put ${formatCount(applied)}, above the ${formatCount(scheduled)} approved` };
    // Approved when it was scheduled: it is not asked again, up to the value approved.
    control = scheduleControl(s);
  }
  const input = String(scheduled);
  const r = await writeCeilingValue(tx, locked, { input, confirm: input, actor: SCHEDULE_ACTOR, reason: p.reason, changeControl: control, details: p.details });
  return { state: "applied", note: `${r.kind}: ${formatCount(r.previous)} → ${formatCount(r.applied)}` };
}

/** The schedule's own request of kind "schedule", approved (applied): a second admin said yes. */
async function approvedRequest(tx: Db, s: ScheduledChange): Promise<boolean> {
  if (s.requestId === null) return false;
  const [r] = await tx.select({ state: changeRequests.state, kind: changeRequests.kind }).from(changeRequests).where(eq(changeRequests.id, s.requestId));
  return r?.state === "applied" && r.kind === "schedule";
}
