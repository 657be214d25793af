import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import { form } from "@/app/_lib/test-form";
import { auditEvents, ceilings, scheduledChanges } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { staffMember } from "@/lib/changes/test-fixtures";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { cancelScheduleCore, createScheduleCore } from "./schedule-action-core";

// The schedule actions check the role themselves (a viewer's or a forged call changes nothing);
// lib decides the rest against the staff row: an operator kills and restores, asks for raises, and
// may not lower a value.

describe.skipIf(skipWithoutDatabase())("schedule server actions", () => {
  const t = useTestDatabase("schedule_actions", { max: 4 });

  async function as(role: Role): Promise<ActionDeps> {
    const who = await staffMember(t.db, role);
    return { session: async () => ({ id: who.staffId, email: who.email, role }), db: async () => t.db, revalidate: () => {} };
  }
  const later = () => new Date(Date.now() + 3_600_000).toISOString().slice(0, 16);
  const endpoint = () => makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
  const schedulesOf = (endpointId: number) => t.db.select().from(scheduledChanges).where(eq(scheduledChanges.endpointId, endpointId));

  it("a viewer can neither schedule nor cancel; nothing changes", async () => {
    const e = await endpoint();
    const viewer = await as("viewer");
    expect(await createScheduleCore(viewer, form({ endpointKey: e.key, action: "kill", repeat: "once", runAt: later(), reason: "r" }))).toMatchObject({
      status: "error",
    });
    const s = await createScheduleCore(await as("operator"), form({ endpointKey: e.key, action: "kill", repeat: "once", runAt: later(), reason: "r" }));
    expect(s).toMatchObject({ status: "ok" });
    const [row] = await schedulesOf(e.endpointId);
    expect(await cancelScheduleCore(viewer, form({ scheduleId: String(row?.id), reason: "forged" }))).toMatchObject({ status: "error" });
    expect((await schedulesOf(e.endpointId))[0]?.state).toBe("scheduled");
  });

  it("an operator schedules a kill but may not schedule a lower value (an admin may); an operator cancels", async () => {
    const e = await endpoint();
    const operator = await as("operator");
    const ceilingId = String(e.ceilingIds[0]);
    expect(
      await createScheduleCore(
        operator,
        form({ endpointKey: e.key, ceilingId, action: "value", value: "10", repeat: "daily", timeOfDay: "22:00", reason: "nights" }),
      ),
    ).toMatchObject({
      status: "error",
      error: expect.stringContaining("only an admin may schedule a new value"),
    });
    expect(await schedulesOf(e.endpointId)).toEqual([]);
    const admin = await as("admin");
    expect(
      await createScheduleCore(
        admin,
        form({ endpointKey: e.key, ceilingId, action: "value", value: "10", repeat: "daily", timeOfDay: "22:00", reason: "nights" }),
      ),
    ).toMatchObject({ status: "ok" });
    const kill = await createScheduleCore(
      operator,
      form({ endpointKey: e.key, ceilingId: "", action: "kill", repeat: "once", runAt: later(), reason: "maintenance" }),
    );
    expect(kill).toMatchObject({ status: "ok", message: expect.stringContaining("kill scheduled at") });
    const [row] = (await schedulesOf(e.endpointId)).filter((s) => s.action === "kill");
    expect(await cancelScheduleCore(operator, form({ scheduleId: String(row?.id), reason: "done early" }))).toMatchObject({ status: "ok" });
    expect((await schedulesOf(e.endpointId)).find((s) => s.id === row?.id)?.state).toBe("cancelled");
  });

  it("bad input is a clear error, nothing is scheduled, and the refusal is audited", async () => {
    const e = await endpoint();
    const admin = await as("admin");
    const bad = [
      [{ repeat: "daily", timeOfDay: "25:00" }, "the hour must be 00 to 23, got '25:00'"],
      [{ repeat: "once", runAt: "2001-01-01T00:00" }, "is in the past"],
      [{ repeat: "once", runAt: "tomorrow" }, "the time to run must be a date and time"],
      // Dates that do not exist would roll over (to 2027-03-02, to 2027-01-01): refused, not guessed.
      [{ repeat: "once", runAt: "2027-02-30T10:00" }, "the time to run must be a date and time"],
      [{ repeat: "once", runAt: "2026-12-31T24:00" }, "the time to run must be a date and time"],
      [{ repeat: "daily", timeOfDay: "22:00", reason: "night\u001bshift" }, "control characters"],
    ] as const;
    for (const [fields, message] of bad) {
      const r = await createScheduleCore(admin, form({ endpointKey: e.key, action: "kill", reason: "r", ...fields }));
      expect(r).toMatchObject({ status: "error", error: expect.stringContaining(message) });
    }
    expect(await schedulesOf(e.endpointId)).toEqual([]);
    const rejected = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "schedule.rejected"));
    expect(rejected.length).toBeGreaterThanOrEqual(3);
    expect(
      await t.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.action, "schedule.rejected"), eq(auditEvents.endpointId, e.endpointId))),
    ).not.toEqual([]);
  });

  it("a scheduled raise of 5x or more is typed twice in the form too", async () => {
    const e = await endpoint();
    await t.db.update(ceilings).set({ maxValue: 10_000_000 }).where(eq(ceilings.endpointId, e.endpointId));
    const admin = await as("admin");
    const fields = { endpointKey: e.key, ceilingId: String(e.ceilingIds[0]), action: "value", value: "5000", repeat: "once", runAt: later(), reason: "launch" };
    expect(await createScheduleCore(admin, form(fields))).toMatchObject({ status: "error", error: expect.stringContaining("type 5,000 again to confirm") });
    expect(await schedulesOf(e.endpointId)).toEqual([]);
    expect(await createScheduleCore(admin, form({ ...fields, confirm: "5000" }))).toMatchObject({ status: "ok" });
    expect((await schedulesOf(e.endpointId)).map((s) => s.state)).toEqual(["awaiting_approval"]);
  });
});
