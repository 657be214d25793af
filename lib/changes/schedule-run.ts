import { and, asc, eq, lte } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, endpoints, scheduledChanges, type ScheduledChange } from "@/db/schema";
import { fireAlert } from "@/lib/alerts/fire";
import { auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import { writeCeilingValue } from "@/lib/ceilings/adjust";
import { killCeilings, restoreCeilings } from "@/lib/ceilings/kill";
import { lockCeiling, lockCeilings } from "@/lib/ceilings/lock";
import { DomainError } from "@/lib/errors";
import { formatCount } from "@/lib/format";
import { logError } from "@/lib/log/redact";
import { scheduleControl } from "./context";
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
    details: { scheduleId: s.id, scheduledBy: s.createdBy, requestId: s.requestId, action: s.action, runAt: s.runAt.toISOString(), outcome: outcome.state, note: outcome.note, nextRunAt: next?.toISOString() ?? null },
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
  if (s.action === "value") {
    const locked = await lockCeiling(tx, s.ceilingId ?? 0);
    const input = String(s.value ?? 0);
    // A raise was approved when it was scheduled (or was none then): it is not asked again.
    const r = await writeCeilingValue(tx, locked, { input, confirm: input, actor: SCHEDULE_ACTOR, reason, changeControl: scheduleControl(s), details });
    return { state: "applied", note: `${r.kind}: ${formatCount(r.previous)} → ${formatCount(r.applied)}` };
  }
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
