import { InputError } from "@/lib/errors";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { ceilings, changeRequests, endpoints, scheduledChanges, type Ceiling, type ScheduledChange } from "@/db/schema";
import { readReason, reasonError } from "@/lib/audit/reason";
import { auditOf, recordAudit } from "@/lib/audit/record";
import { hasRole } from "@/lib/auth/roles";
import { clampToBounds, CONFIRM_RAISE_FACTOR, parseLimitInput } from "@/lib/limits/parse";
import { formatCount } from "@/lib/format";
import { ChangeControlError } from "@/lib/control/errors";
import { requestChange } from "./request";
import { standingValue } from "./schedule-standing";
import { nextAtTimeOfDay, nextDailyRun, parseTimeOfDay } from "./schedule-time";
import type { Requester } from "./types";
import { staffActor, verifyStaff } from "./who";

export { runDueSchedules, SCHEDULE_ACTOR } from "./schedule-run";

// A kill, a restore or a value at a time, once or every day at a time of day (UTC). Scheduling is
// checked like the direct verb it stands for: a kill or a restore by an operator, a value by an
// admin, and a value not below the standing value (schedule-standing.ts) is a raise: the schedule
// waits for its approval (a change request of kind "schedule") before the worker will run it. Equal
// counts as a raise because a schedule runs later, when the value may have been lowered: "06:00 →
// 100" after "22:00 → 50" raises every morning, so it is approved once, when it is scheduled.

export type ScheduleAction = ScheduledChange["action"];
export type ScheduleRepeat = ScheduledChange["repeat"];

export type CreateScheduleParams = {
  endpointKey: string;
  /** Null or absent: every ceiling of the endpoint (a kill or a restore only). */
  ceilingId?: number | null;
  action: ScheduleAction;
  /** The new value as typed (a value schedule only); parsed like a ceiling value, clamped visibly. */
  value?: string | number | null;
  repeat: ScheduleRepeat;
  /** When a once schedule runs; must be in the future. */
  runAt?: Date | null;
  /** When a daily schedule runs, "HH:MM" in UTC. */
  timeOfDay?: string | null;
  reason: string;
  by: Requester;
  /** A raise of 5x or more over the standing value: the value typed again. */
  confirm?: string | null;
  now?: Date;
};

export type CreatedSchedule = ScheduledChange & { message: string };

const ACTIONS: readonly string[] = ["kill", "restore", "value"];
const REPEATS: readonly string[] = ["once", "daily"];
/** A schedule further out than this is a typo more often than a plan. */
const MAX_AHEAD_MS = 366 * 24 * 60 * 60 * 1000;

const invalid = (message: string) => InputError.of(message);

type When = { runAt: Date; timeOfDay: string | null };

function readWhen(p: CreateScheduleParams, now: Date): When {
  if (!REPEATS.includes(p.repeat)) throw invalid(`repeat must be once or daily, got '${String(p.repeat).slice(0, 20)}'`);
  if (p.repeat === "daily") {
    if (p.runAt) throw invalid("a daily schedule runs at a time of day: give the time (HH:MM, UTC), not a date");
    const t = parseTimeOfDay(p.timeOfDay ?? "");
    if (!t.ok) throw invalid(t.error);
    return { runAt: nextAtTimeOfDay(t.time, now), timeOfDay: t.text };
  }
  if (p.timeOfDay) throw invalid("a once schedule runs at a date and time: give the time to run, not a time of day");
  const at = p.runAt;
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) throw invalid("the time to run is required: a date and time in UTC");
  if (at.getTime() <= now.getTime()) throw invalid(`the time to run (${at.toISOString()}) is in the past: a schedule must be in the future`);
  if (at.getTime() - now.getTime() > MAX_AHEAD_MS) throw invalid("the time to run must be within a year");
  return { runAt: at, timeOfDay: null };
}

function readValue(p: CreateScheduleParams): number | null {
  if (!ACTIONS.includes(p.action)) throw invalid(`the action must be kill, restore or value, got '${String(p.action).slice(0, 20)}'`);
  const given = p.value !== undefined && p.value !== null && String(p.value).trim() !== "";
  if (p.action !== "value") {
    if (given) throw invalid(`a scheduled ${p.action} takes no value`);
    return null;
  }
  const parsed = parseLimitInput(String(p.value ?? ""), "the value");
  if (!parsed.ok) throw invalid(parsed.error);
  return parsed.value;
}

type Target = { endpoint: { id: number; key: string; archivedAt: Date | null }; ceiling: Ceiling | null };

async function readTarget(db: Db, p: CreateScheduleParams): Promise<Target> {
  const [endpoint] = await db
    .select({ id: endpoints.id, key: endpoints.key, archivedAt: endpoints.archivedAt })
    .from(endpoints)
    .where(eq(endpoints.key, p.endpointKey));
  if (!endpoint) throw new ChangeControlError("not_found", `no endpoint '${p.endpointKey.slice(0, 80)}'`);
  if (endpoint.archivedAt !== null) throw invalid(`${endpoint.key} is archived: it refuses every call, there is nothing to schedule`);
  if (p.ceilingId === undefined || p.ceilingId === null) {
    if (p.action === "value") throw invalid("a scheduled value is for one ceiling: choose which");
    return { endpoint, ceiling: null };
  }
  const [ceiling] = await db
    .select()
    .from(ceilings)
    .where(and(eq(ceilings.id, p.ceilingId), eq(ceilings.endpointId, endpoint.id)));
  if (!ceiling) throw new ChangeControlError("not_found", `${endpoint.key} has no ceiling #${p.ceilingId}`);
  return { endpoint, ceiling };
}

/**
 * Schedules a kill, a restore or a value. Refused input changes nothing and is audited as
 * schedule.rejected with what was typed. A value above the one in force now is created awaiting
 * approval, with its change request, in one transaction; the rest are scheduled at once.
 */
export async function createSchedule(db: Db, p: CreateScheduleParams): Promise<CreatedSchedule> {
  try {
    return await scheduleChecked(db, p);
  } catch (error) {
    // Every refusal (role, unknown endpoint or ceiling, bad input, a missing confirmation) is seen.
    if (error instanceof ChangeControlError || error instanceof InputError) await recordRejected(db, p, error).catch(() => undefined);
    throw error;
  }
}

async function scheduleChecked(db: Db, p: CreateScheduleParams): Promise<CreatedSchedule> {
  const now = p.now ?? new Date();
  const who = await verifyStaff(db, p.by, "operator", "schedule a change");
  const read = readReason(p.reason, true);
  if (!read.ok) throw reasonError(read.problem, (message) => new ChangeControlError("reason_required", message));
  const reason = read.text ?? "";
  const typed = readValue(p);
  const when = readWhen(p, now);
  const { endpoint, ceiling } = await readTarget(db, p);

  let value: number | null = null;
  let clampNote: string | null = null;
  let raise = false;
  if (typed !== null && ceiling) {
    // Clamped now, where the person sees it; the worker clamps again to the bounds of its day.
    const { applied, clamped } = clampToBounds(typed, { min: ceiling.minValue, max: ceiling.maxValue });
    value = applied;
    if (clamped) clampNote = `you typed ${formatCount(typed)}; ${formatCount(applied)} is scheduled, the ${clamped === "max" ? "maximum" : "minimum"}`;
    const standing = await standingValue(db, ceiling);
    raise = applied !== 0 && applied >= standing;
    // A value that is not a raise is the admin's direct edit (0 is a kill, an operator's); a raise
    // anyone who may ask may ask for.
    if (!raise && applied !== 0 && !hasRole(who.role, "admin")) {
      throw new ChangeControlError("forbidden", `${who.email} is an operator: only an admin may schedule a new value (a kill or a restore an operator may)`);
    }
    // The value form's 5x rule, on top of the approval: a slipped zero is caught where it is typed.
    if (raise && (standing === 0 || applied >= standing * CONFIRM_RAISE_FACTOR)) {
      const confirm = parseLimitInput(String(p.confirm ?? ""));
      if (!confirm.ok || confirm.value !== typed) {
        throw new ChangeControlError(
          "confirmation_required",
          `${formatCount(standing)} → ${formatCount(applied)} is ${CONFIRM_RAISE_FACTOR}× or more: type ${formatCount(typed)} again to confirm`,
        );
      }
    }
  }

  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(scheduledChanges)
      .values({
        endpointId: endpoint.id,
        ceilingId: ceiling?.id ?? null,
        action: p.action,
        value,
        repeat: p.repeat,
        runAt: when.runAt,
        state: raise ? "awaiting_approval" : "scheduled",
        reason,
        createdById: who.staffId,
        createdBy: who.email,
      })
      .returning();
    if (!row) throw new Error("schedule not inserted");
    await recordAudit(tx, {
      ...auditOf(staffActor(who), endpoint, ceiling?.id),
      action: "schedule.create",
      rawInput: p.value === undefined || p.value === null ? null : String(p.value),
      previousValue: ceiling?.value ?? null,
      appliedValue: value,
      clamped: clampNote !== null,
      reason,
      details: {
        scheduleId: row.id,
        action: row.action,
        repeat: row.repeat,
        runAt: row.runAt.toISOString(),
        timeOfDay: when.timeOfDay,
        state: row.state,
        typed,
        via: who.via,
      },
    });
    let scheduled = row;
    if (raise) {
      // The request reads the schedule through this transaction, so both commit or neither.
      const request = await requestChange(tx, { kind: "schedule", change: { scheduleId: row.id }, requester: p.by, reason, now });
      const [linked] = await tx.update(scheduledChanges).set({ requestId: request.id }).where(eq(scheduledChanges.id, row.id)).returning();
      if (linked) scheduled = linked;
    }
    const whenText =
      p.repeat === "daily" ? `every day at ${when.timeOfDay} UTC, first ${scheduled.runAt.toISOString()}` : `at ${scheduled.runAt.toISOString()}`;
    const what = p.action === "value" ? `value ${formatCount(value ?? 0)}` : p.action;
    const parts = [clampNote, `${endpoint.key}: ${what} scheduled ${whenText}`];
    if (raise) parts.push(`that is a raise: it runs once a second admin approves request #${scheduled.requestId}`);
    return { ...scheduled, message: parts.filter((s): s is string => s !== null).join("; ") };
  });
}

async function recordRejected(db: Db, p: CreateScheduleParams, error: ChangeControlError | InputError): Promise<void> {
  const [endpoint] = await db.select({ id: endpoints.id, key: endpoints.key }).from(endpoints).where(eq(endpoints.key, p.endpointKey));
  await recordAudit(db, {
    ...(endpoint
      ? auditOf(staffActor(p.by), endpoint, p.ceilingId ?? undefined)
      : { actorType: "staff" as const, actor: p.by.email, target: p.endpointKey.slice(0, 200) }),
    action: "schedule.rejected",
    rawInput: p.value === undefined || p.value === null ? null : String(p.value).slice(0, 200),
    reason: (p.reason ?? "").trim().slice(0, 500) || null,
    details: {
      code: error.code,
      error: error.message,
      action: String(p.action).slice(0, 20),
      repeat: String(p.repeat).slice(0, 20),
      runAt: p.runAt instanceof Date && !Number.isNaN(p.runAt.getTime()) ? p.runAt.toISOString() : null,
      timeOfDay: p.timeOfDay ? String(p.timeOfDay).slice(0, 20) : null,
    },
  });
}

/**
 * An approved scheduled raise becomes due: awaiting_approval → scheduled, in the approval's
 * transaction (core's applier of a "schedule" request). A daily one approved after its first time
 * moves to its next; a once one approved late runs at the worker's next pass.
 */
export async function activateSchedule(tx: Db, scheduleId: number): Promise<void> {
  const [row] = await tx.select().from(scheduledChanges).where(eq(scheduledChanges.id, scheduleId)).for("update");
  if (!row || row.state !== "awaiting_approval") {
    throw new ChangeControlError("stale", `schedule #${scheduleId} is ${row ? row.state : "gone"}, no longer awaiting approval: nothing was applied`);
  }
  const now = new Date();
  const runAt = row.repeat === "daily" && row.runAt.getTime() <= now.getTime() ? nextDailyRun(row.runAt, now) : row.runAt;
  await tx.update(scheduledChanges).set({ state: "scheduled", runAt }).where(eq(scheduledChanges.id, scheduleId));
}

/** Cancels a schedule that has not run for good: an operator or an admin, with a reason. Audited. */
export async function cancelSchedule(db: Db, p: { id: number; by: Requester; reason: string }): Promise<ScheduledChange> {
  try {
    return await cancelChecked(db, p);
  } catch (error) {
    if (error instanceof ChangeControlError || error instanceof InputError) await recordCancelRejected(db, p, error).catch(() => undefined);
    throw error;
  }
}

/** A refused cancel, on the schedule's endpoint log when the schedule exists. */
async function recordCancelRejected(db: Db, p: { id: number; by: Requester; reason: string }, error: ChangeControlError | InputError): Promise<void> {
  const [row] = Number.isSafeInteger(p.id)
    ? await db
        .select({ id: endpoints.id, key: endpoints.key, ceilingId: scheduledChanges.ceilingId })
        .from(scheduledChanges)
        .innerJoin(endpoints, eq(endpoints.id, scheduledChanges.endpointId))
        .where(eq(scheduledChanges.id, p.id))
    : [];
  await recordAudit(db, {
    ...(row
      ? auditOf(staffActor(p.by), row, row.ceilingId ?? undefined)
      : { actorType: "staff" as const, actor: p.by.email, target: `schedule:${String(p.id).slice(0, 40)}` }),
    action: "schedule.rejected",
    reason: (p.reason ?? "").trim().slice(0, 500) || null,
    details: { attempt: "cancel", scheduleId: p.id, code: error.code, error: error.message, via: p.by.via },
  });
}

async function cancelChecked(db: Db, p: { id: number; by: Requester; reason: string }): Promise<ScheduledChange> {
  const who = await verifyStaff(db, p.by, "operator", "cancel a schedule");
  const read = readReason(p.reason, true);
  if (!read.ok) throw reasonError(read.problem, (message) => new ChangeControlError("reason_required", message));
  const reason = read.text ?? "";
  return db.transaction(async (tx) => {
    const [row] = await tx.select().from(scheduledChanges).where(eq(scheduledChanges.id, p.id)).for("update");
    if (!row) throw new ChangeControlError("not_found", `no schedule #${p.id}`);
    if (row.state === "done" || row.state === "cancelled") throw InputError.of(`schedule #${p.id} is already ${row.state}: nothing to cancel`);
    const [cancelled] = await tx
      .update(scheduledChanges)
      .set({ state: "cancelled", cancelledBy: who.email, cancelledAt: sql`now()` })
      .where(eq(scheduledChanges.id, row.id))
      .returning();
    if (!cancelled) throw new Error("schedule not cancelled");
    const [endpoint] = await tx.select({ id: endpoints.id, key: endpoints.key }).from(endpoints).where(eq(endpoints.id, row.endpointId));
    await recordAudit(tx, {
      ...(endpoint ? auditOf(staffActor(who), endpoint, row.ceilingId ?? undefined) : { actorType: "staff" as const, actor: who.email }),
      action: "schedule.cancel",
      reason,
      appliedValue: row.value,
      // A pending request for it goes stale when someone approves it: the schedule is no longer waiting.
      details: {
        scheduleId: row.id,
        action: row.action,
        repeat: row.repeat,
        runAt: row.runAt.toISOString(),
        state: row.state,
        requestId: row.requestId,
        via: who.via,
      },
    });
    return cancelled;
  });
}

export type ScheduleView = ScheduledChange & {
  endpointKey: string;
  ceiling: Pick<Ceiling, "metric" | "scope" | "window" | "windowSeconds"> | null;
  requestState: string | null;
};

/** Schedules still to run (and, with includeDone, the finished ones), soonest first. */
export async function listSchedules(db: Db, p: { endpointId?: number; includeDone?: boolean; limit?: number } = {}): Promise<ScheduleView[]> {
  const states = p.includeDone ? (["awaiting_approval", "scheduled", "done", "cancelled"] as const) : (["awaiting_approval", "scheduled"] as const);
  const rows = await db
    .select({
      s: scheduledChanges,
      endpointKey: endpoints.key,
      metric: ceilings.metric,
      scope: ceilings.scope,
      window: ceilings.window,
      windowSeconds: ceilings.windowSeconds,
      requestState: changeRequests.state,
    })
    .from(scheduledChanges)
    .innerJoin(endpoints, eq(endpoints.id, scheduledChanges.endpointId))
    .leftJoin(ceilings, eq(ceilings.id, scheduledChanges.ceilingId))
    .leftJoin(changeRequests, eq(changeRequests.id, scheduledChanges.requestId))
    .where(and(inArray(scheduledChanges.state, [...states]), p.endpointId === undefined ? undefined : eq(scheduledChanges.endpointId, p.endpointId)))
    .orderBy(sql`${scheduledChanges.state} in ('done', 'cancelled')`, asc(scheduledChanges.runAt), asc(scheduledChanges.id))
    .limit(p.limit ?? 200);
  return rows.map((r) => ({
    ...r.s,
    endpointKey: r.endpointKey,
    ceiling: r.metric && r.scope && r.window ? { metric: r.metric, scope: r.scope, window: r.window, windowSeconds: r.windowSeconds } : null,
    requestState: r.requestState,
  }));
}
