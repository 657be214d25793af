import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { alerts, auditEvents, budgets, ceilings, raiseEnds } from "@/db/schema";
import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { createEndpoint } from "@/lib/catalog/change";
import { adjustCeiling, killEndpoint, restoreEndpoint } from "@/lib/ceilings";
import { setCeilingValue, startFixtureProcess } from "@/lib/enforcement/test-fixtures";
import { makeBudget, setBudgetValue } from "@/lib/enforcement/budget-fixtures";
import { adjustBudget } from "@/lib/budgets/adjust";
import { updateBudget } from "@/lib/budgets/update";
import { readBudget } from "@/lib/budgets/read";
import { setBounds } from "@/lib/ceilings/bounds";
import { ChangeControlError } from "@/lib/control/errors";
import { breakGlass } from "./break-glass";
import { approveChange, rejectChange } from "./decide";
import { requestChange } from "./request";
import { activeRaiseEnds, endRaises, recordRaiseEnd } from "./raise-ends";
import { staffMember } from "./test-fixtures";

// A temporary raise ends by itself: the worker puts the old value back under the endpoint lock,
// once, unless someone changed the value meanwhile (then an alert, once). Under reservation load
// from two other processes, no grant commits after the revert that the old value would refuse.

const admin = { type: "staff", email: "admin@example.com" } as const;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
let n = 0;

describe.skipIf(skipWithoutDatabase())("raise ends", () => {
  const t = useTestDatabase("raise_ends", { max: 8 });

  async function raised(p: { value: number; raisedTo: number; endsInMs: number }) {
    const r = await raisedForever(p);
    return { ...r, ...(await endIn(r, p.endsInMs)) };
  }

  async function endIn(r: { endpointId: number; ceilingId: number; value: number; raisedTo: number }, ms: number) {
    // Each test's end is the only one due: earlier tests' ends are set aside.
    await t.db.update(raiseEnds).set({ state: "cancelled" }).where(eq(raiseEnds.state, "active"));
    const endsAt = new Date(Date.now() + ms);
    // The version the raise left, as writeCeilingValue returns it to the applier.
    const [c] = await t.db.select({ version: ceilings.version }).from(ceilings).where(eq(ceilings.id, r.ceilingId));
    const raiseEndId = await recordRaiseEnd(t.db, {
      requestId: null,
      endpointId: r.endpointId,
      ceilingId: r.ceilingId,
      revertTo: r.value,
      raisedTo: r.raisedTo,
      raisedVersion: c?.version ?? 0,
      endsAt,
      createdBy: admin.email,
    });
    return { raiseEndId, endsAt };
  }

  async function raisedForever(p: { value: number; raisedTo: number }) {
    n += 1;
    const key = `raise.e${n}`;
    const endpoint = await createEndpoint(t.db, {
      spec: {
        key,
        name: key,
        unit: "units",
        parts: [{ name: "units", price: "0.000001" }],
        perCallMax: 10,
        ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: p.value, min: 0, max: 100_000_000, default: p.value }],
      },
      actor: admin,
      reason: "raise end test",
    });
    const [ceiling] = await t.db.select().from(ceilings).where(eq(ceilings.endpointId, endpoint.id));
    if (!ceiling) throw new Error("no ceiling");
    // What an approved temporary raise does in its transaction: the value, then its end.
    await setCeilingValue(t.db, ceiling.id, p.raisedTo);
    return { key, endpointId: endpoint.id, ceilingId: ceiling.id, value: p.value, raisedTo: p.raisedTo };
  }

  const valueOf = async (ceilingId: number) => (await t.db.select({ v: ceilings.value }).from(ceilings).where(eq(ceilings.id, ceilingId)))[0]?.v;
  const stateOf = async (id: number) => (await t.db.select().from(raiseEnds).where(eq(raiseEnds.id, id)))[0];
  const auditCount = async (action: string, raiseEndId: number) =>
    (
      await t.db
        .select()
        .from(auditEvents)
        .where(and(eq(auditEvents.action, action), sql`${auditEvents.details}->>'raiseEndId' = ${String(raiseEndId)}`))
    ).length;
  const alertsOf = async (kind: string, raiseEndId: number) =>
    (
      await t.db
        .select()
        .from(alerts)
        .where(and(eq(alerts.kind, kind), eq(alerts.dedupeKey, `${kind}:${raiseEndId}`)))
    ).length;

  it("is not due before its end, and is shown with its end for the countdown", async () => {
    const r = await raised({ value: 100, raisedTo: 500, endsInMs: 60_000 });
    expect(await endRaises(t.db)).toEqual({ reverted: 0, skipped: 0 });
    expect(await valueOf(r.ceilingId)).toBe(500);
    const shown = await activeRaiseEnds(t.db, { endpointId: r.endpointId });
    expect(shown).toEqual([
      expect.objectContaining({ id: r.raiseEndId, ceilingId: r.ceilingId, raisedTo: 500, revertTo: 100, inForce: true, endsAt: r.endsAt }),
    ]);
  });

  it("puts the old value back at its end, once, with three workers at it, audited as a lowering by the system", async () => {
    const r = await raised({ value: 100, raisedTo: 500, endsInMs: 60_000 });
    const at = new Date(r.endsAt.getTime() + 1);
    // An edit in flight holds the endpoint lock: all three workers are at the row at once.
    const batch = await holdTransaction(t.db, (tx) => tx.execute(sql`select ceilings.lock_endpoints_for_change(${`{${r.endpointId}}`}::int[])`));
    const running = Promise.all([endRaises(t.db, at), endRaises(t.db, at), endRaises(t.db, at)]);
    await pause(300);
    await batch.release();
    const results = await running;
    expect(results.reduce((sum, x) => sum + x.reverted, 0)).toBe(1);
    expect(await auditCount("ceiling.adjust", r.raiseEndId)).toBe(1);
    expect(await valueOf(r.ceilingId)).toBe(100);
    expect((await stateOf(r.raiseEndId))?.state).toBe("reverted");
    const [row] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "ceiling.adjust"), sql`${auditEvents.details}->>'raiseEndId' = ${String(r.raiseEndId)}`));
    expect(row).toMatchObject({ actorType: "system", actor: "raise end", previousValue: 500, appliedValue: 100 });
    expect(row?.details).toMatchObject({ kind: "lower", raiseEndId: r.raiseEndId, requestId: null });
    expect(await alertsOf("raise_reverted", r.raiseEndId)).toBe(1);
    expect(await activeRaiseEnds(t.db, { endpointId: r.endpointId })).toEqual([]);
  });

  it("keeps its end when the value is lowered meanwhile: one person cannot make the raise permanent", async () => {
    const r = await raised({ value: 100, raisedTo: 500, endsInMs: 60_000 });
    const [c] = await t.db.select().from(ceilings).where(eq(ceilings.id, r.ceilingId));
    await adjustCeiling(t.db, { ceilingId: r.ceilingId, input: "300", expectedVersion: c?.version ?? 0, actor: admin, reason: "a bit less" });
    expect((await activeRaiseEnds(t.db, { endpointId: r.endpointId }))[0]?.inForce).toBe(true);
    const at = new Date(r.endsAt.getTime() + 1);
    const results = await Promise.all([endRaises(t.db, at), endRaises(t.db, at), endRaises(t.db, at)]);
    expect(results.reduce((sum, x) => sum + x.reverted, 0)).toBe(1);
    expect(await endRaises(t.db, at)).toEqual({ reverted: 0, skipped: 0 });
    expect(await valueOf(r.ceilingId)).toBe(100);
    expect((await stateOf(r.raiseEndId))?.state).toBe("reverted");
    expect(await auditCount("ceiling.adjust", r.raiseEndId)).toBe(1);
    expect(await alertsOf("revert_skipped", r.raiseEndId)).toBe(0);
  });

  it("an approved raise 100 → 150 for an hour, lowered to 149 by one admin: at its end 100 is back", async () => {
    const r = await raisedForever({ value: 100, raisedTo: 100 });
    await t.db.update(raiseEnds).set({ state: "cancelled" }).where(eq(raiseEnds.state, "active"));
    const operator = await staffMember(t.db, "operator");
    const approver = await staffMember(t.db, "admin");
    const now = new Date();
    const temporary = await requestChange(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: r.ceilingId, value: 150 },
      requester: operator,
      reason: "one hour",
      endsAfterSeconds: 3600,
    });
    expect((await approveChange(t.db, { id: temporary.id, approver, now })).applied).toBe(true);
    const [c] = await t.db.select().from(ceilings).where(eq(ceilings.id, r.ceilingId));
    await adjustCeiling(t.db, {
      ceilingId: r.ceilingId,
      input: "149",
      expectedVersion: c?.version ?? 0,
      actor: { type: "staff", email: approver.email },
      reason: "one unit less",
    });
    // Asking again (and being rejected) is not a decision to keep the raise.
    const again = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: r.ceilingId, value: 150 }, requester: operator, reason: "keep it" });
    await rejectChange(t.db, { id: again.id, approver, note: "no" });
    await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: r.ceilingId, value: 150 }, requester: operator, reason: "please keep it" });
    const [end] = await activeRaiseEnds(t.db, { endpointId: r.endpointId });
    expect(end).toMatchObject({ revertTo: 100, raisedTo: 150, inForce: true });
    expect(await endRaises(t.db, new Date(now.getTime() + 3600_000 + 1000))).toEqual({ reverted: 1, skipped: 0 });
    expect(await valueOf(r.ceilingId)).toBe(100);
    expect((await stateOf(end?.id ?? 0))?.resolvedNote).toContain("149 → 100");
  });

  it("reverts nothing when the value was lowered and then raised back to the raised value by a later approval", async () => {
    // 100 → 150 for an hour (approved), lowered to 120, then a permanent 120 → 150 approved: the
    // value in force is the raised one again, but a later decision put it there; the end must not
    // put 100 back. Only the version the raise left tells the two apart.
    const r = await raisedForever({ value: 100, raisedTo: 100 });
    await t.db.update(raiseEnds).set({ state: "cancelled" }).where(eq(raiseEnds.state, "active"));
    const operator = await staffMember(t.db, "operator");
    const approver = await staffMember(t.db, "admin");
    const now = new Date();
    const temporary = await requestChange(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: r.ceilingId, value: 150 },
      requester: operator,
      reason: "one hour",
      endsAfterSeconds: 3600,
    });
    expect((await approveChange(t.db, { id: temporary.id, approver, now })).applied).toBe(true);
    const [end] = await activeRaiseEnds(t.db, { endpointId: r.endpointId });
    expect(end).toMatchObject({ revertTo: 100, raisedTo: 150, inForce: true });
    const [c] = await t.db.select().from(ceilings).where(eq(ceilings.id, r.ceilingId));
    await adjustCeiling(t.db, { ceilingId: r.ceilingId, input: "120", expectedVersion: c?.version ?? 0, actor: admin, reason: "lower" });
    const permanent = await requestChange(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: r.ceilingId, value: 150 },
      requester: operator,
      reason: "for good",
    });
    expect((await approveChange(t.db, { id: permanent.id, approver })).applied).toBe(true);
    expect((await activeRaiseEnds(t.db, { endpointId: r.endpointId }))[0]?.inForce).toBe(false);
    const at = new Date(now.getTime() + 3600_000 + 1000);
    expect(await endRaises(t.db, at)).toEqual({ reverted: 0, skipped: 1 });
    expect(await endRaises(t.db, at)).toEqual({ reverted: 0, skipped: 0 });
    expect(await valueOf(r.ceilingId)).toBe(150);
    const resolved = await stateOf(end?.id ?? 0);
    expect(resolved?.state).toBe("superseded");
    expect(resolved?.resolvedNote).toContain("changed by a later approved request (it is at 150 again");
    expect(await auditCount("ceiling.adjust", end?.id ?? 0)).toBe(0);
    expect(await alertsOf("revert_skipped", end?.id ?? 0)).toBe(1);
  });

  it("keeps its end through a kill: it stays killed, and a restore brings back the value from before the raise", async () => {
    const r = await raised({ value: 100, raisedTo: 500, endsInMs: 60_000 });
    await killEndpoint(t.db, { endpointKey: r.key, actor: admin, reason: "incident" });
    expect(await endRaises(t.db, new Date(r.endsAt.getTime() + 1))).toEqual({ reverted: 1, skipped: 0 });
    const [c] = await t.db.select().from(ceilings).where(eq(ceilings.id, r.ceilingId));
    expect(c).toMatchObject({ value: 0, valueBeforeKill: 100 });
    expect((await stateOf(r.raiseEndId))?.resolvedNote).toContain("a restore now brings back 100, not 500");
    await restoreEndpoint(t.db, { endpointKey: r.key, actor: admin, reason: "over" });
    expect(await valueOf(r.ceilingId)).toBe(100);
  });

  it("a killed and restored raise still ends: a kill and a restore are one person's, not a decision to keep it", async () => {
    const r = await raised({ value: 100, raisedTo: 500, endsInMs: 60_000 });
    await killEndpoint(t.db, { endpointKey: r.key, actor: admin, reason: "incident" });
    await restoreEndpoint(t.db, { endpointKey: r.key, actor: admin, reason: "back" });
    expect(await valueOf(r.ceilingId)).toBe(500);
    expect(await endRaises(t.db, new Date(r.endsAt.getTime() + 1))).toEqual({ reverted: 1, skipped: 0 });
    expect(await valueOf(r.ceilingId)).toBe(100);
  });

  it("ends a budget's temporary raise the same way, audited as budget.adjust", async () => {
    const r = await raisedForever({ value: 100, raisedTo: 500 });
    const budget = await makeBudget(t.db, { endpointIds: [r.endpointId], value: 2_000_000 });
    await setBudgetValue(t.db, budget.id, 9_000_000);
    await t.db.update(raiseEnds).set({ state: "cancelled" }).where(eq(raiseEnds.state, "active"));
    const endsAt = new Date(Date.now() + 60_000);
    const [raisedBudget] = await t.db.select({ version: budgets.version }).from(budgets).where(eq(budgets.id, budget.id));
    const id = await recordRaiseEnd(t.db, {
      requestId: null,
      endpointId: null,
      budgetId: budget.id,
      revertTo: 2_000_000,
      raisedTo: 9_000_000,
      raisedVersion: raisedBudget?.version ?? 0,
      endsAt,
      createdBy: admin.email,
    });
    expect(await endRaises(t.db, new Date(endsAt.getTime() + 1))).toEqual({ reverted: 1, skipped: 0 });
    const [b] = await t.db.select().from(budgets).where(eq(budgets.id, budget.id));
    expect(b?.value).toBe(2_000_000);
    const [row] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "budget.adjust"), sql`${auditEvents.details}->>'raiseEndId' = ${String(id)}`));
    expect(row).toMatchObject({ actorType: "system", actor: "raise end", previousValue: 9_000_000, appliedValue: 2_000_000 });
  });

  it("a budget's temporary raise lowered meanwhile by one unit keeps its end", async () => {
    const r = await raisedForever({ value: 100, raisedTo: 100 });
    const budget = await makeBudget(t.db, { endpointIds: [r.endpointId], value: 100_000_000 });
    await t.db.update(raiseEnds).set({ state: "cancelled" }).where(eq(raiseEnds.state, "active"));
    const operator = await staffMember(t.db, "operator");
    const approver = await staffMember(t.db, "admin");
    const now = new Date();
    const temporary = await requestChange(t.db, {
      kind: "budget.value",
      change: { budgetKey: budget.key, value: 150_000_000 },
      requester: operator,
      reason: "one hour",
      endsAfterSeconds: 3600,
    });
    expect((await approveChange(t.db, { id: temporary.id, approver, now })).applied).toBe(true);
    const [b] = await t.db.select().from(budgets).where(eq(budgets.id, budget.id));
    await adjustBudget(t.db, {
      key: budget.key,
      input: "149",
      expectedVersion: b?.version ?? 0,
      actor: { type: "staff", email: approver.email },
      reason: "a little less",
    });
    expect(await endRaises(t.db, new Date(now.getTime() + 3600_000 + 1000))).toEqual({ reverted: 1, skipped: 0 });
    const [after] = await t.db.select().from(budgets).where(eq(budgets.id, budget.id));
    expect(after?.value).toBe(100_000_000);
  });

  it("a min above the value a running raise puts back is a raise (asked, never one person's); one already there is lowered with the value at the end, audited", async () => {
    const r = await raised({ value: 100, raisedTo: 150, endsInMs: 60_000 });
    const version = async () => (await t.db.select({ v: ceilings.version }).from(ceilings).where(eq(ceilings.id, r.ceilingId)))[0]?.v ?? 0;
    // min = 150 leaves the value where it is (150), but the end could no longer put 100 back.
    const refused = await setBounds(t.db, {
      ceilingId: r.ceilingId,
      min: "150",
      max: "100000000",
      expectedVersion: await version(),
      actor: admin,
      reason: "keep it",
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChangeControlError);
    expect((refused as ChangeControlError).code).toBe("approval_required");
    // At or below what the end puts back: one person's.
    await setBounds(t.db, { ceilingId: r.ceilingId, min: "100", max: "100000000", expectedVersion: await version(), actor: admin, reason: "floor" });
    // A min above it there anyway (written before the rule): the end lowers it with the value.
    await t.db.update(ceilings).set({ minValue: 150, defaultValue: 150 }).where(eq(ceilings.id, r.ceilingId));
    expect(await endRaises(t.db, new Date(r.endsAt.getTime() + 1))).toEqual({ reverted: 1, skipped: 0 });
    const [c] = await t.db.select().from(ceilings).where(eq(ceilings.id, r.ceilingId));
    expect({ value: c?.value, min: c?.minValue }).toEqual({ value: 100, min: 100 });
    expect((await stateOf(r.raiseEndId))?.state).toBe("reverted");
    const [bounds] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "ceiling.bounds"), eq(auditEvents.ceilingId, r.ceilingId), eq(auditEvents.actor, "raise end")));
    expect(bounds).toMatchObject({
      actorType: "system",
      details: expect.objectContaining({ before: { min: 150, max: 100_000_000 }, after: { min: 100, max: 100_000_000 } }),
    });
  });

  it("a budget's min above the value a running raise puts back is a raise; one already there is lowered with the value at the end", async () => {
    const r = await raisedForever({ value: 100, raisedTo: 100 });
    const budget = await makeBudget(t.db, { endpointIds: [r.endpointId], value: 100_000_000 });
    await t.db.update(raiseEnds).set({ state: "cancelled" }).where(eq(raiseEnds.state, "active"));
    const operator = await staffMember(t.db, "operator");
    const approver = await staffMember(t.db, "admin");
    const now = new Date();
    const temporary = await requestChange(t.db, {
      kind: "budget.value",
      change: { budgetKey: budget.key, value: 150_000_000 },
      requester: operator,
      reason: "one hour",
      endsAfterSeconds: 3600,
    });
    expect((await approveChange(t.db, { id: temporary.id, approver, now })).applied).toBe(true);
    const { spec } = await readBudget(t.db, budget.key);
    const version = async () => (await t.db.select({ v: budgets.version }).from(budgets).where(eq(budgets.id, budget.id)))[0]?.v ?? 0;
    const fields = (min: number) => ({
      name: spec.name,
      members: spec.members,
      alertThresholds: spec.alertThresholds,
      min,
      max: spec.max,
      default: 150_000_000,
    });
    const refused = await updateBudget(t.db, {
      key: budget.key,
      expectedVersion: await version(),
      fields: fields(150_000_000),
      actor: { type: "staff", email: approver.email },
      reason: "keep it",
    }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChangeControlError);
    expect((refused as ChangeControlError).code).toBe("approval_required");
    await updateBudget(t.db, {
      key: budget.key,
      expectedVersion: await version(),
      fields: fields(100_000_000),
      actor: { type: "staff", email: approver.email },
      reason: "floor",
    });
    await t.db.update(budgets).set({ minValue: 150_000_000, defaultValue: 150_000_000 }).where(eq(budgets.id, budget.id));
    expect(await endRaises(t.db, new Date(now.getTime() + 3600_000 + 1000))).toEqual({ reverted: 1, skipped: 0 });
    const [after] = await t.db.select().from(budgets).where(eq(budgets.id, budget.id));
    expect({ value: after?.value, min: after?.minValue }).toEqual({ value: 100_000_000, min: 100_000_000 });
  });

  it("a break-glass raise for a while: core records its end in the applying transaction, the worker ends it", async () => {
    const r = await raisedForever({ value: 100, raisedTo: 100 });
    await t.db.update(raiseEnds).set({ state: "cancelled" }).where(eq(raiseEnds.state, "active"));
    const boss = await staffMember(t.db, "admin");
    const request = await breakGlass(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: r.ceilingId, value: 300 },
      requester: boss,
      reason: "launch traffic, nobody else awake",
      endsAfterSeconds: 60,
    });
    expect(await valueOf(r.ceilingId)).toBe(300);
    const [end] = await activeRaiseEnds(t.db, { endpointId: r.endpointId });
    expect(end).toMatchObject({ requestId: request.id, ceilingId: r.ceilingId, revertTo: 100, raisedTo: 300, inForce: true });
    expect(await endRaises(t.db, new Date((end?.endsAt.getTime() ?? 0) + 1))).toEqual({ reverted: 1, skipped: 0 });
    expect(await valueOf(r.ceilingId)).toBe(100);
    const [row] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "ceiling.adjust"), sql`${auditEvents.details}->>'raiseEndId' = ${String(end?.id)}`));
    expect(row?.details).toMatchObject({ requestId: request.id, kind: "lower" });
  });

  it("under load from two processes reverts at its end; no grant commits after the revert that the old value refuses", async () => {
    const raisedOne = await raisedForever({ value: 50, raisedTo: 10_000_000 });
    const fixture = path.join(__dirname, "..", "catalog", "reserve-load.fixture.ts");
    const loads = [0, 1].map(() => startFixtureProcess<Record<string, number>>(fixture, [t.url, raisedOne.key]));
    const count = async () =>
      resultRows<{ n: number }>(await t.db.execute(sql`select count(*)::int as n from reservations where endpoint_id = ${raisedOne.endpointId}`))[0]?.n ?? 0;
    let r = { ...raisedOne, raiseEndId: 0, endsAt: new Date() };
    try {
      await Promise.all(loads.map((l) => l.ready));
      r = { ...raisedOne, ...(await endIn(raisedOne, 1_500)) };
      // The worker's fast lane, in this process: every 200 ms until the raise has ended.
      let revertedAt = 0;
      let atRevert = 0;
      const deadline = r.endsAt.getTime() + 10_000;
      while (Date.now() < deadline) {
        const { reverted } = await endRaises(t.db);
        if (reverted > 0) {
          atRevert = await count();
          revertedAt = Date.now();
          break;
        }
        await pause(200);
      }
      expect(revertedAt).toBeGreaterThanOrEqual(r.endsAt.getTime());
      expect(revertedAt - r.endsAt.getTime()).toBeLessThan(5_000);
      // The raise was in use: more was granted than the old value allows, so after the revert
      // every reservation is refused by the ceiling.
      expect(atRevert).toBeGreaterThan(50);
      await pause(700);
      expect(await count()).toBe(atRevert);
    } finally {
      for (const l of loads) l.send();
    }
    const told = (await Promise.all(loads.map((l) => l.done))).reduce<Record<string, number>>((acc, x) => {
      for (const [k, v] of Object.entries(x)) acc[k] = (acc[k] ?? 0) + v;
      return acc;
    }, {});
    expect(told["refused:ceiling"]).toBeGreaterThan(0);
    expect(await valueOf(raisedOne.ceilingId)).toBe(50);
    // The ledger agrees with the counter: nothing was granted that the counter does not hold.
    const [usage] = resultRows<{ held: number }>(
      await t.db.execute(sql`select coalesce(sum(held + settled), 0)::int as held from usage where ceiling_id = ${raisedOne.ceilingId}`),
    );
    expect(usage?.held).toBe(await count());
  }, 30_000);
});
