import { InputError } from "@/lib/errors";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alerts, auditEvents, ceilings, changeRequests, scheduledChanges } from "@/db/schema";
import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { killEndpoint } from "@/lib/ceilings/kill";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { approveChange } from "./decide";
import { endRaises } from "./raise-ends";
import { requestChange } from "./request";
import { ChangeControlError } from "@/lib/control/errors";
import { runDueSchedules } from "./schedule-run";
import { cancelSchedule, createSchedule, listSchedules } from "./schedules";
import { staffMember } from "./test-fixtures";

// Schedules: refused input changes nothing and is audited; a kill or restore is an operator's, a
// value an admin's, a raise waits for a second admin; the worker applies each once at its time,
// through the direct verbs' writes, and a daily one moves to its next day.

const MINUTE = 60_000;

describe.skipIf(skipWithoutDatabase())("schedules", () => {
  const t = useTestDatabase("schedules", { max: 6 });

  // Each test's schedules are the only ones due: earlier tests' are set aside. Bounds up to 10M.
  async function endpoint() {
    await t.db
      .update(scheduledChanges)
      .set({ state: "cancelled" })
      .where(sql`${scheduledChanges.state} in ('scheduled', 'awaiting_approval')`);
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await t.db.update(ceilings).set({ maxValue: 10_000_000 }).where(eq(ceilings.endpointId, e.endpointId));
    return e;
  }
  const ceilingOf = async (id: number) => (await t.db.select().from(ceilings).where(eq(ceilings.id, id)))[0];
  const schedulesOf = (endpointId: number) => t.db.select().from(scheduledChanges).where(eq(scheduledChanges.endpointId, endpointId));
  const eventsOf = (endpointId: number, action: string) =>
    t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.endpointId, endpointId), eq(auditEvents.action, action)))
      .orderBy(auditEvents.id);

  async function refused(p: Parameters<typeof createSchedule>[1], message: RegExp) {
    const error = await createSchedule(t.db, p).then(
      () => null,
      (e: unknown) => e,
    );
    // Bad input is the one input error; a refusal of change control its own.
    expect(error instanceof InputError || error instanceof ChangeControlError).toBe(true);
    expect(error instanceof Error ? error.message : "").toMatch(message);
  }

  it("refuses bad input with a clear error, changes nothing, and audits what was tried", async () => {
    const e = await endpoint();
    const admin = await staffMember(t.db, "admin");
    const now = new Date();
    const base = { endpointKey: e.key, action: "kill" as const, reason: "night", by: admin, now };
    await refused({ ...base, repeat: "once", runAt: new Date(now.getTime() - 1000) }, /is in the past: a schedule must be in the future/);
    await refused({ ...base, repeat: "daily", timeOfDay: "25:00" }, /the hour must be 00 to 23, got '25:00'/);
    await refused({ ...base, repeat: "daily", timeOfDay: "24:00" }, /the hour must be 00 to 23, got '24:00'/);
    await refused({ ...base, repeat: "daily", timeOfDay: "9:5" }, /HH:MM in UTC with two digits each/);
    await refused({ ...base, repeat: "daily", timeOfDay: "" }, /the time of day is required/);
    await refused({ ...base, repeat: "daily", timeOfDay: "22:00", reason: "night\u0007shift" }, /must not contain control characters/);
    await refused({ ...base, repeat: "daily", timeOfDay: "22:00", reason: "  " }, /a reason is required/);
    await refused(
      { ...base, repeat: "once", runAt: new Date(now.getTime() + MINUTE), action: "value", ceilingId: e.ceilingIds[0], value: "1e9" },
      /must be a whole number, got '1e9'/,
    );
    await refused({ ...base, repeat: "once", runAt: new Date(now.getTime() + MINUTE), action: "value", value: "10" }, /choose which/);
    expect(await schedulesOf(e.endpointId)).toEqual([]);
    const rejected = await eventsOf(e.endpointId, "schedule.rejected");
    expect(rejected).toHaveLength(9);
    expect(rejected[1]?.details).toMatchObject({ timeOfDay: "25:00", error: "the hour must be 00 to 23, got '25:00'" });
    expect(rejected[7]?.rawInput).toBe("1e9");
  });

  it("asks the role of the direct verb: a viewer nothing, an operator a kill but not a lower value", async () => {
    const e = await endpoint();
    const [viewer, operator] = [await staffMember(t.db, "viewer"), await staffMember(t.db, "operator")];
    const runAt = new Date(Date.now() + MINUTE);
    await refused({ endpointKey: e.key, action: "kill", repeat: "once", runAt, reason: "x", by: viewer }, /viewer/);
    await refused(
      { endpointKey: e.key, ceilingId: e.ceilingIds[0], action: "value", value: "10", repeat: "once", runAt, reason: "x", by: operator },
      /only an admin may schedule a new value/,
    );
    // A raise an operator may ask for: it waits for an admin's approval.
    const ask = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId: e.ceilingIds[0],
      action: "value",
      value: "2000",
      repeat: "once",
      runAt,
      reason: "launch",
      by: operator,
    });
    expect(ask.state).toBe("awaiting_approval");
    const kill = await createSchedule(t.db, { endpointKey: e.key, action: "kill", repeat: "once", runAt, reason: "maintenance", by: operator });
    expect(kill).toMatchObject({ state: "scheduled", action: "kill", ceilingId: null, createdBy: operator.email });
    const created = await eventsOf(e.endpointId, "schedule.create");
    expect(created.map((c) => [c.actor, c.reason, c.details?.state])).toEqual([
      [operator.email, "launch", "awaiting_approval"],
      [operator.email, "maintenance", "scheduled"],
    ]);
  });

  it("clamps a value to the bounds where the person sees it, and applies it at its time through the adjust", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    await t.db.update(ceilings).set({ minValue: 100 }).where(eq(ceilings.id, ceilingId));
    const admin = await staffMember(t.db, "admin");
    const now = new Date();
    const s = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "5",
      repeat: "once",
      runAt: new Date(now.getTime() + MINUTE),
      reason: "quiet hours",
      by: admin,
      now,
    });
    expect(s.value).toBe(100);
    expect(s.message).toContain("you typed 5; 100 is scheduled, the minimum");
    expect(await runDueSchedules(t.db, now)).toEqual({ applied: 0, nothing: 0, failed: 0 });
    expect(await runDueSchedules(t.db, new Date(now.getTime() + MINUTE))).toMatchObject({ applied: 1 });
    expect((await ceilingOf(ceilingId))?.value).toBe(100);
    const [adjust] = await eventsOf(e.endpointId, "ceiling.adjust");
    expect(adjust).toMatchObject({ actorType: "system", actor: "schedule", previousValue: 1000, appliedValue: 100 });
    expect(adjust?.details).toMatchObject({ scheduleId: s.id, scheduledBy: admin.email });
    const [row] = await schedulesOf(e.endpointId);
    expect(row).toMatchObject({ state: "done", runs: 1 });
    expect(row?.lastOutcome).toContain("lower: 1,000 → 100");
  });

  it("a daily schedule applies, then waits for the same time tomorrow; missed days are skipped, not caught up", async () => {
    const e = await endpoint();
    const admin = await staffMember(t.db, "admin");
    const now = new Date("2030-01-10T12:00:00Z");
    const kill = await createSchedule(t.db, { endpointKey: e.key, action: "kill", repeat: "daily", timeOfDay: "22:00", reason: "nights off", by: admin, now });
    const restore = await createSchedule(t.db, {
      endpointKey: e.key,
      action: "restore",
      repeat: "daily",
      timeOfDay: "06:00",
      reason: "mornings on",
      by: admin,
      now,
    });
    expect(kill.runAt.toISOString()).toBe("2030-01-10T22:00:00.000Z");
    expect(restore.runAt.toISOString()).toBe("2030-01-11T06:00:00.000Z");

    expect(await runDueSchedules(t.db, new Date("2030-01-10T22:00:01Z"))).toMatchObject({ applied: 1 });
    expect((await ceilingOf(e.ceilingIds[0] ?? 0))?.value).toBe(0);
    expect(await runDueSchedules(t.db, new Date("2030-01-10T22:00:02Z"))).toMatchObject({ applied: 0 });
    expect(await runDueSchedules(t.db, new Date("2030-01-11T06:00:00Z"))).toMatchObject({ applied: 1 });
    expect((await ceilingOf(e.ceilingIds[0] ?? 0))?.value).toBe(1000);

    const byId = async (id: number) => (await t.db.select().from(scheduledChanges).where(eq(scheduledChanges.id, id)))[0];
    expect(await byId(kill.id)).toMatchObject({ state: "scheduled", runs: 1, runAt: new Date("2030-01-11T22:00:00Z") });
    // No worker for three days: the kill runs once, at the next 22:00 after now.
    expect(await runDueSchedules(t.db, new Date("2030-01-14T23:00:00Z"))).toMatchObject({ applied: 2 });
    expect(await byId(kill.id)).toMatchObject({ runs: 2, runAt: new Date("2030-01-15T22:00:00Z") });
    const applied = await eventsOf(e.endpointId, "schedule.apply");
    expect(applied.map((a) => a.details?.outcome)).toEqual(["applied", "applied", "applied", "applied"]);
    expect(applied.every((a) => a.actorType === "system")).toBe(true);
  });

  it("three workers at one due schedule at once: it applies once", async () => {
    const e = await endpoint();
    const admin = await staffMember(t.db, "admin");
    const now = new Date();
    const s = await createSchedule(t.db, {
      endpointKey: e.key,
      action: "kill",
      repeat: "once",
      runAt: new Date(now.getTime() + 1000),
      reason: "once",
      by: admin,
      now,
    });
    // An edit in flight holds the endpoint lock, so all three reach the schedule before any applies.
    const edit = await holdTransaction(t.db, (tx) => tx.execute(sql`select ceilings.lock_endpoints_for_change(${`{${e.endpointId}}`}::int[])`));
    const at = new Date(now.getTime() + 2000);
    const running = Promise.all([runDueSchedules(t.db, at), runDueSchedules(t.db, at), runDueSchedules(t.db, at)]);
    await new Promise((r) => setTimeout(r, 300));
    await edit.release();
    const results = await running;
    expect(results.reduce((sum, r) => sum + r.applied + r.nothing + r.failed, 0)).toBe(1);
    expect(await eventsOf(e.endpointId, "schedule.apply")).toHaveLength(1);
    expect((await schedulesOf(e.endpointId))[0]).toMatchObject({ id: s.id, runs: 1, state: "done" });
  });

  it("a kill already in force is nothing to do: the run counts, nothing is written twice", async () => {
    const e = await endpoint();
    const admin = await staffMember(t.db, "admin");
    const now = new Date();
    await createSchedule(t.db, { endpointKey: e.key, action: "kill", repeat: "once", runAt: new Date(now.getTime() + 1000), reason: "a", by: admin, now });
    await createSchedule(t.db, { endpointKey: e.key, action: "kill", repeat: "once", runAt: new Date(now.getTime() + 2000), reason: "b", by: admin, now });
    expect(await runDueSchedules(t.db, new Date(now.getTime() + 3000))).toEqual({ applied: 1, nothing: 1, failed: 0 });
    expect(await eventsOf(e.endpointId, "ceiling.kill")).toHaveLength(1);
  });

  it("a scheduled raise waits for a second admin; approved, it applies at its time without asking again", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const [operator, admin] = [await staffMember(t.db, "operator"), await staffMember(t.db, "admin")];
    const now = new Date();
    const s = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "500",
      repeat: "once",
      runAt: new Date(now.getTime() + 1000),
      reason: "launch",
      by: admin,
      now,
    });
    expect(s.state).toBe("scheduled");
    const raise = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "1000000",
      confirm: "1000000",
      repeat: "once",
      runAt: new Date(now.getTime() + 2000),
      reason: "launch day",
      by: operator,
      now,
    });
    expect(raise.state).toBe("awaiting_approval");
    expect(raise.message).toContain(`second admin approves request #${raise.requestId}`);
    const [request] = await t.db
      .select()
      .from(changeRequests)
      .where(eq(changeRequests.id, raise.requestId ?? 0));
    expect(request).toMatchObject({ kind: "schedule", state: "pending", requestedBy: operator.email, change: { scheduleId: raise.id } });

    // Not before it is approved (the lower value, an admin's, applies at once).
    await runDueSchedules(t.db, new Date(now.getTime() + 3000));
    expect((await ceilingOf(ceilingId))?.value).toBe(500);
    const approved = await approveChange(t.db, { id: raise.requestId ?? 0, approver: admin });
    expect(approved.applied).toBe(true);
    expect(await runDueSchedules(t.db, new Date(now.getTime() + 3000))).toMatchObject({ applied: 1 });
    expect((await ceilingOf(ceilingId))?.value).toBe(1_000_000);
    const [adjust] = (await eventsOf(e.endpointId, "ceiling.adjust")).filter((a) => a.details?.scheduleId === raise.id);
    expect(adjust?.details).toMatchObject({ kind: "raise", requestId: raise.requestId, scheduledBy: operator.email });
  });

  it("is listed until done, and cancelled (audited) it never runs; a cancelled raise's approval goes stale", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const [operator, admin] = [await staffMember(t.db, "operator"), await staffMember(t.db, "admin")];
    const now = new Date();
    const kill = await createSchedule(t.db, {
      endpointKey: e.key,
      action: "kill",
      repeat: "once",
      runAt: new Date(now.getTime() + 1000),
      reason: "x",
      by: admin,
      now,
    });
    const raise = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "5000",
      confirm: "5000",
      repeat: "daily",
      timeOfDay: "08:00",
      reason: "y",
      by: admin,
      now,
    });
    expect((await listSchedules(t.db, { endpointId: e.endpointId })).map((s) => [s.id, s.state])).toEqual([
      [kill.id, "scheduled"],
      [raise.id, "awaiting_approval"],
    ]);
    await expect(cancelSchedule(t.db, { id: kill.id, by: operator, reason: "" })).rejects.toThrow(/reason is required/);
    await cancelSchedule(t.db, { id: kill.id, by: operator, reason: "not needed" });
    await expect(cancelSchedule(t.db, { id: kill.id, by: operator, reason: "again" })).rejects.toThrow(/already cancelled/);
    await cancelSchedule(t.db, { id: raise.id, by: operator, reason: "launch moved" });
    expect(await runDueSchedules(t.db, new Date(now.getTime() + 2 * 86_400_000))).toMatchObject({ applied: 0 });
    expect((await ceilingOf(ceilingId))?.value).toBe(1000);
    const other = await staffMember(t.db, "admin");
    expect(await approveChange(t.db, { id: raise.requestId ?? 0, approver: other })).toMatchObject({ applied: false });
    expect(await listSchedules(t.db, { endpointId: e.endpointId })).toEqual([]);
    const cancels = await eventsOf(e.endpointId, "schedule.cancel");
    expect(cancels.map((c) => [c.actor, c.reason])).toEqual([
      [operator.email, "not needed"],
      [operator.email, "launch moved"],
    ]);
    expect(
      await t.db
        .select()
        .from(auditEvents)
        .where(sql`${auditEvents.details}->>'scheduleId' = ${String(kill.id)} and ${auditEvents.action} = 'ceiling.kill'`),
    ).toEqual([]);
  });

  // --- The rules a schedule is judged by on the day it runs, not only when it is scheduled. ---

  const HOUR = 60 * MINUTE;
  const failedAlerts = (scheduleId: number) =>
    t.db
      .select()
      .from(alerts)
      .where(and(eq(alerts.kind, "schedule_failed"), sql`${alerts.dedupeKey} like ${`schedule_failed:${scheduleId}:%`}`));
  const timeOfDay = (d: Date) => d.toISOString().slice(11, 16);

  it("a value scheduled during a temporary raise is judged against what its end puts back: it waits for approval and never keeps the raise alone", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const [a, b] = [await staffMember(t.db, "admin"), await staffMember(t.db, "admin")];
    const r = await requestChange(t.db, {
      kind: "ceiling.value",
      change: { ceilingId, value: 4000 },
      requester: a,
      reason: "launch, one hour only",
      endsAfterSeconds: 3600,
    });
    const now = new Date();
    await approveChange(t.db, { id: r.id, approver: b, now });
    expect((await ceilingOf(ceilingId))?.value).toBe(4000);
    // 4,000 is the value in force, but 1,000 is what stands: scheduling 4,000 is a raise.
    const s = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "4000",
      repeat: "once",
      runAt: new Date(now.getTime() + 2 * HOUR),
      reason: "keep it",
      by: a,
      now,
    });
    expect(s.state).toBe("awaiting_approval");
    await endRaises(t.db, new Date(now.getTime() + HOUR + 1000));
    expect((await ceilingOf(ceilingId))?.value).toBe(1000);
    await runDueSchedules(t.db, new Date(now.getTime() + 2 * HOUR + 1000));
    expect((await ceilingOf(ceilingId))?.value).toBe(1000);
  });

  it("a value lower when scheduled but a raise on its day does nothing without approval: schedule_failed says a raise needs approval", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const admin = await staffMember(t.db, "admin");
    const now = new Date();
    const s = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "500",
      repeat: "once",
      runAt: new Date(now.getTime() + 1000),
      reason: "quieter",
      by: admin,
      now,
    });
    expect(s.state).toBe("scheduled");
    // Lowered meanwhile (an instant, one-person change): 500 is now above what is in force.
    await t.db.update(ceilings).set({ value: 100 }).where(eq(ceilings.id, ceilingId));
    expect(await runDueSchedules(t.db, new Date(now.getTime() + 2000))).toEqual({ applied: 0, nothing: 0, failed: 1 });
    expect((await ceilingOf(ceilingId))?.value).toBe(100);
    const [row] = await t.db.select().from(scheduledChanges).where(eq(scheduledChanges.id, s.id));
    expect(row).toMatchObject({ state: "done", runs: 1 });
    expect(row?.lastOutcome).toMatch(/100 → 500 is a raise and needs a second admin's approval/);
    const fired = await failedAlerts(s.id);
    expect(fired).toHaveLength(1);
    expect(fired[0]?.message).toMatch(/needs a second admin's approval/);
  });

  it("a night-time pair: 22:00 → 50 is instant, 06:00 → 1,000 (the value in force) is approved once and raises every morning", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const [a, b] = [await staffMember(t.db, "admin"), await staffMember(t.db, "admin")];
    const now = new Date();
    const night = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "50",
      repeat: "daily",
      timeOfDay: timeOfDay(new Date(now.getTime() + HOUR)),
      reason: "night",
      by: a,
      now,
    });
    expect(night.state).toBe("scheduled");
    // Not below the value in force: the morning value raises back, every day, so it is asked.
    const morning = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "1000",
      repeat: "daily",
      timeOfDay: timeOfDay(new Date(now.getTime() + 2 * HOUR)),
      reason: "day",
      by: a,
      now,
    });
    expect(morning.state).toBe("awaiting_approval");
    await approveChange(t.db, { id: morning.requestId ?? 0, approver: b });
    for (const day of [0, 1]) {
      const base = now.getTime() + day * 24 * HOUR;
      await runDueSchedules(t.db, new Date(base + HOUR + MINUTE));
      expect((await ceilingOf(ceilingId))?.value).toBe(50);
      await runDueSchedules(t.db, new Date(base + 2 * HOUR + MINUTE));
      expect((await ceilingOf(ceilingId))?.value).toBe(1000);
    }
    expect(await failedAlerts(morning.id)).toEqual([]);
  });

  it("a schedule row forced to scheduled with no approved request never raises: schedule_failed, nothing applied", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const a = await staffMember(t.db, "admin");
    const now = new Date();
    // A schedule row forced to "scheduled" with no approved request is never a raise's permission.
    const [forged] = await t.db
      .insert(scheduledChanges)
      .values({
        endpointId: e.endpointId,
        ceilingId,
        action: "value",
        value: 5000,
        repeat: "once",
        runAt: now,
        state: "scheduled",
        reason: "forged",
        createdBy: a.email,
      })
      .returning();
    expect(await runDueSchedules(t.db, new Date(now.getTime() + 1000))).toEqual({ applied: 0, nothing: 0, failed: 1 });
    expect((await ceilingOf(ceilingId))?.value).toBe(1000);
    expect(await failedAlerts(forged?.id ?? 0)).toHaveLength(1);
  });

  it("a scheduled value does not lift a kill made after it was scheduled: nothing applied, schedule_failed once per run", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const admin = await staffMember(t.db, "admin");
    const now = new Date();
    const s = await createSchedule(t.db, {
      endpointKey: e.key,
      ceilingId,
      action: "value",
      value: "50",
      repeat: "daily",
      timeOfDay: timeOfDay(new Date(now.getTime() + HOUR)),
      reason: "night-time ceiling",
      by: admin,
      now,
    });
    await killEndpoint(t.db, { endpointKey: e.key, actor: { type: "staff", email: "oncall@test.local" }, reason: "incident: runaway loop" });
    expect(await runDueSchedules(t.db, new Date(now.getTime() + HOUR + MINUTE))).toEqual({ applied: 0, nothing: 0, failed: 1 });
    // Whoever killed decides what comes next.
    expect((await ceilingOf(ceilingId))?.value).toBe(0);
    expect((await ceilingOf(ceilingId))?.valueBeforeKill).toBe(1000);
    const [row] = await t.db.select().from(scheduledChanges).where(eq(scheduledChanges.id, s.id));
    expect(row?.lastOutcome).toMatch(/the ceiling is killed, and whoever killed decides/);
    expect(await runDueSchedules(t.db, new Date(now.getTime() + HOUR + 2 * MINUTE))).toEqual({ applied: 0, nothing: 0, failed: 0 });
    expect(await failedAlerts(s.id)).toHaveLength(1);
    await runDueSchedules(t.db, new Date(now.getTime() + 25 * HOUR + MINUTE));
    expect(await failedAlerts(s.id)).toHaveLength(2);
    expect((await ceilingOf(ceilingId))?.value).toBe(0);
  });

  it("every refusal, by role or of something unknown, is audited as schedule.rejected, scheduling and cancelling", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const [viewer, operator] = [await staffMember(t.db, "viewer"), await staffMember(t.db, "operator")];
    const runAt = new Date(Date.now() + HOUR);
    await expect(
      createSchedule(t.db, { endpointKey: e.key, ceilingId, action: "value", value: 50, repeat: "daily", timeOfDay: "22:00", reason: "night", by: operator }),
    ).rejects.toMatchObject({ code: "forbidden" });
    await expect(createSchedule(t.db, { endpointKey: e.key, action: "kill", repeat: "once", runAt, reason: "night", by: viewer })).rejects.toMatchObject({
      code: "forbidden",
    });
    await expect(
      createSchedule(t.db, { endpointKey: `${e.key}.nope`, action: "kill", repeat: "once", runAt, reason: "night", by: operator }),
    ).rejects.toMatchObject({ code: "not_found" });
    const kill = await createSchedule(t.db, { endpointKey: e.key, action: "kill", repeat: "once", runAt, reason: "night", by: operator });
    await expect(cancelSchedule(t.db, { id: kill.id, by: viewer, reason: "no" })).rejects.toMatchObject({ code: "forbidden" });
    await expect(cancelSchedule(t.db, { id: 987_654_321, by: operator, reason: "no" })).rejects.toMatchObject({ code: "not_found" });
    const rejected = async (actor: string) =>
      t.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.action, "schedule.rejected"), eq(auditEvents.actor, actor)))
        .orderBy(auditEvents.id);
    expect((await rejected(operator.email)).map((r) => r.details?.code)).toEqual(["forbidden", "not_found", "not_found"]);
    expect((await rejected(viewer.email)).map((r) => [r.details?.code, r.endpointId])).toEqual([
      ["forbidden", e.endpointId],
      ["forbidden", e.endpointId],
    ]);
    expect((await schedulesOf(e.endpointId)).map((s) => s.state)).toEqual(["scheduled"]);
  });

  it("a scheduled raise of 5x or more asks for the value typed again; refused, nothing is scheduled", async () => {
    const e = await endpoint();
    const ceilingId = e.ceilingIds[0] ?? 0;
    const admin = await staffMember(t.db, "admin");
    const base = {
      endpointKey: e.key,
      ceilingId,
      action: "value" as const,
      value: "5000",
      repeat: "once" as const,
      runAt: new Date(Date.now() + HOUR),
      reason: "launch",
      by: admin,
    };
    await expect(createSchedule(t.db, base)).rejects.toMatchObject({
      code: "confirmation_required",
      message: expect.stringMatching(/1,000 → 5,000 is 5× or more: type 5,000 again/),
    });
    await expect(createSchedule(t.db, { ...base, confirm: "500" })).rejects.toMatchObject({ code: "confirmation_required" });
    expect(await schedulesOf(e.endpointId)).toEqual([]);
    expect(await eventsOf(e.endpointId, "schedule.rejected")).toHaveLength(2);
    const ok = await createSchedule(t.db, { ...base, confirm: "5000" });
    expect(ok.state).toBe("awaiting_approval");
    // Under 5x: no second typing.
    expect((await createSchedule(t.db, { ...base, value: "4999" })).state).toBe("awaiting_approval");
  });
});
