import { describe, expect, it } from "vitest";
import { auditEvents } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { eq, sql } from "drizzle-orm";
import { adjustCeiling } from "./adjust";
import { setBounds } from "./bounds";
import { setupControl } from "@/lib/control/context";
import { CeilingConflictError, CeilingError } from "./errors";
import { auditOf, createEndpoint, first, readCeiling } from "./test-fixtures";

const actor = { type: "staff", email: "admin@test.local" } as const;

describe.skipIf(skipWithoutDatabase())("adjustCeiling", () => {
  const t = useTestDatabase("ceilings_adjust", { max: 24 });

  it("writes the value, bumps the version and its audit row together", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    // A lowering: one person's edit (a raise is a change request, lib/changes).
    const result = await adjustCeiling(t.db, { ceilingId: c.id, input: "80", expectedVersion: c.version, actor, reason: "launch" });
    expect(result).toMatchObject({ kind: "lower", previous: 100, applied: 80, clamped: null, version: c.version + 1 });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 80, version: c.version + 1 });
    const [audit] = await auditOf(t.db, c.id);
    expect(audit).toMatchObject({
      action: "ceiling.adjust",
      actorType: "staff",
      actor: "admin@test.local",
      rawInput: "80",
      previousValue: 100,
      appliedValue: 80,
      clamped: false,
      reason: "launch",
    });
  });

  it("writes nothing when the audit row cannot be written (one transaction)", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    // An actor name the audit table refuses (NUL byte) makes the audit insert fail after the update.
    const bad = { type: "staff", email: "bad\u0000actor" } as const;
    await expect(adjustCeiling(t.db, { ceilingId: c.id, input: "80", expectedVersion: c.version, actor: bad, reason: "x" })).rejects.toThrow();
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100, version: c.version });
  });

  it.each(["1e9", "500abc", "12.5", "-5", "", " "])("rejects %j, saves nothing, and shows staff what was refused", async (input) => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    await expect(adjustCeiling(t.db, { ceilingId: c.id, input, expectedVersion: c.version, actor, reason: "x" })).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 100, version: c.version });
    const audit = await auditOf(t.db, c.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: "ceiling.rejected", rawInput: input, previousValue: 100, appliedValue: null });
  });

  it("requires a reason", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    await expect(adjustCeiling(t.db, { ceilingId: c.id, input: "90", expectedVersion: c.version, actor, reason: "  " })).rejects.toMatchObject({
      code: "reason_required",
    });
  });

  it("clamps to the bounds and logs the raw input and the clamp", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const result = await adjustCeiling(t.db, { ceilingId: c.id, input: "3", expectedVersion: c.version, actor, reason: "quiet day" });
    expect(result).toMatchObject({ applied: 10, clamped: "min" });
    expect(first(await auditOf(t.db, c.id))).toMatchObject({ rawInput: "3", previousValue: 100, appliedValue: 10, clamped: true });
    // Clamped to the max is still a raise: it needs a second admin (here the setup path stands in for the approval).
    const raised = await adjustCeiling(t.db, {
      ceilingId: c.id,
      input: "1000",
      confirm: "1000",
      expectedVersion: result.version,
      actor,
      reason: "busy day",
      changeControl: setupControl("test"),
    });
    expect(raised).toMatchObject({ applied: 150, clamped: "max" });
  });

  it("refuses a stale version with the current value, never overwriting", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    await adjustCeiling(t.db, { ceilingId: c.id, input: "90", expectedVersion: c.version, actor, reason: "first" });
    const second = adjustCeiling(t.db, { ceilingId: c.id, input: "80", expectedVersion: c.version, actor, reason: "second" });
    await expect(second).rejects.toBeInstanceOf(CeilingConflictError);
    await expect(second).rejects.toMatchObject({ currentValue: 90, currentVersion: c.version + 1 });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 90 });
  });

  it("lets exactly one of 20 parallel saves with the same version win", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    // Open every pool connection first: otherwise the first save commits while the others are
    // still connecting, and the race never happens.
    await Promise.all(Array.from({ length: 24 }, () => t.db.execute(sql`select pg_sleep(0.05)`)));
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        adjustCeiling(t.db, { ceilingId: c.id, input: String(20 + i), expectedVersion: c.version, actor, reason: `race ${i}` }),
      ),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r) => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost.every((r) => r.reason instanceof CeilingConflictError)).toBe(true);
    expect(await auditOf(t.db, c.id)).toHaveLength(1);
    expect(await readCeiling(t.db, c.id)).toMatchObject({ version: c.version + 1 });
  });

  it("asks for the value again on a 5x raise", async () => {
    const { ceilings } = await createEndpoint(t.db, {
      ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 20, defaultValue: 20, minValue: 0, maxValue: 1000 }],
    });
    const c = first(ceilings);
    const base = { ceilingId: c.id, input: "100", expectedVersion: c.version, actor, reason: "campaign" };
    await expect(adjustCeiling(t.db, base)).rejects.toMatchObject({ code: "confirmation_required" });
    await expect(adjustCeiling(t.db, { ...base, confirm: "1000" })).rejects.toMatchObject({ code: "confirmation_required" });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 20 });
    // Confirmed, it is still a raise: the second admin comes on top of the retyping.
    await expect(adjustCeiling(t.db, { ...base, confirm: "100" })).rejects.toMatchObject({ code: "approval_required" });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 20 });
    await expect(adjustCeiling(t.db, { ...base, confirm: "100", changeControl: setupControl("test") })).resolves.toMatchObject({ applied: 100 });
  });

  it("treats 0 as a kill of that ceiling, below the minimum, and a value on it as a restore", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const kill = await adjustCeiling(t.db, { ceilingId: c.id, input: "0", expectedVersion: c.version, actor, reason: "abuse" });
    expect(kill).toMatchObject({ kind: "kill", applied: 0 });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 0, valueBeforeKill: 100, killedBy: "admin@test.local" });
    const restore = await adjustCeiling(t.db, { ceilingId: c.id, input: "60", expectedVersion: kill.version, actor, reason: "fixed" });
    expect(restore).toMatchObject({ kind: "restore", previous: 0, applied: 60 });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ value: 60, valueBeforeKill: null, killedAt: null, killedBy: null });
    expect((await auditOf(t.db, c.id)).map((a) => a.action)).toEqual(["ceiling.kill", "ceiling.restore"]);
  });

  it("reports an unchanged value without writing", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    await expect(adjustCeiling(t.db, { ceilingId: c.id, input: "100", expectedVersion: c.version, actor, reason: "x" })).rejects.toBeInstanceOf(CeilingError);
    expect(await auditOf(t.db, c.id)).toHaveLength(0);
  });

  it("sets bounds, re-clamps the value and logs both", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    const result = await setBounds(t.db, { ceilingId: c.id, min: "10", max: "80", expectedVersion: c.version, actor, reason: "tighter" });
    expect(result).toMatchObject({ min: 10, max: 80, previousValue: 100, value: 80, valueClamped: true });
    expect(await readCeiling(t.db, c.id)).toMatchObject({ minValue: 10, maxValue: 80, value: 80, defaultValue: 80 });
    expect(first(await auditOf(t.db, c.id))).toMatchObject({ action: "ceiling.bounds", previousValue: 100, appliedValue: 80, clamped: true });
    await expect(setBounds(t.db, { ceilingId: c.id, min: "90", max: "80", expectedVersion: result.version, actor, reason: "x" })).rejects.toMatchObject({
      code: "invalid_input",
    });
  });

  it("keeps the audit log append-only", async () => {
    const { ceilings } = await createEndpoint(t.db);
    const c = first(ceilings);
    await adjustCeiling(t.db, { ceilingId: c.id, input: "90", expectedVersion: c.version, actor, reason: "x" });
    const row = first(await auditOf(t.db, c.id));
    // drizzle wraps the database error; the trigger's message is on its cause. The app role lacks
    // the privileges outright (db/roles.int.test.ts); the trigger binds even the owner.
    const refused = { cause: { message: expect.stringMatching(/audit_events is append-only/) } };
    await expect(t.ownerDb.update(auditEvents).set({ reason: "rewritten" }).where(eq(auditEvents.id, row.id))).rejects.toMatchObject(refused);
    await expect(t.ownerDb.delete(auditEvents).where(eq(auditEvents.id, row.id))).rejects.toMatchObject(refused);
    await expect(t.ownerDb.execute(sql`truncate audit_events`)).rejects.toMatchObject(refused);
    await expect(t.db.delete(auditEvents).where(eq(auditEvents.id, row.id))).rejects.toMatchObject({ cause: { code: "42501" } });
    expect(first(await auditOf(t.db, c.id))).toMatchObject({ reason: "x" });
  });
});
