import { and, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, auditEvents, plans, planLimitValues } from "@/db/schema";
import { holdTransaction, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { readBudget, updateBudget } from "@/lib/budgets";
import { setBounds } from "@/lib/ceilings";
import { removeCeiling } from "@/lib/catalog";
import { createPlan, deletePlan, listPlans, readPlan, removePlanValue, setDefaultPlan, setPlanValue, updatePlan } from "./index";
import { unassignedAccounts } from "./read";
import { setupControl } from "@/lib/changes";

// Data built on purpose (values above the own, a switch, an unblock): change control is tested in
// lib/changes/plan-kinds.int.test.ts; here the verbs' own rules are.
const control = setupControl("test");
import { lockedPlan } from "./write";
import { budgetOn, DOLLAR, perCallerEndpoint, planAudit, planKey, planSnapshot } from "./test-fixtures";
import { planValuesOn } from "@/lib/limits/test-fixtures";

// The plan verbs against a real Postgres: values inside the bounds (clamped, logged), the 5x raise
// typed twice, input refused as typed logged and nothing saved, values only on per-caller ceilings
// and per-account budgets, exactly one default, no delete while accounts are on a plan, and new
// bounds pulling the plans' values in.

const actor = { type: "staff", email: "admin@test.local" } as const;

describe.skipIf(skipWithoutDatabase())("plans", () => {
  const t = useTestDatabase("plans_verbs");

  async function plan(prefix = "p") {
    return createPlan(t.db, { key: planKey(prefix), name: "Pro", actor, reason: "tiers" });
  }

  it("creates a plan, audited, and refuses a second with the same key or a bad key", async () => {
    const p = await plan();
    expect(p).toMatchObject({ isDefault: false, version: 1, description: "" });
    expect((await planAudit(t.db, p.key)).map((e) => e.action)).toEqual(["plan.create"]);
    await expect(createPlan(t.db, { key: p.key, name: "again", actor, reason: "r" })).rejects.toMatchObject({ code: "duplicate_key" });
    await expect(createPlan(t.db, { key: "Pro Plan", name: "", actor, reason: "r" })).rejects.toMatchObject({
      code: "invalid_input",
      problems: [{ path: "key" }, { path: "name" }],
    });
    await expect(createPlan(t.db, { key: planKey(), name: "x", actor, reason: " " })).rejects.toMatchObject({ code: "reason_required" });
  });

  it("renames with the version seen; a stale version is a conflict and saves nothing", async () => {
    const p = await plan();
    const changes = await updatePlan(t.db, { planKey: p.key, expectedVersion: p.version, name: "Pro 2024", description: "paid", actor, reason: "r" });
    expect(changes.map((c) => c.field)).toEqual(["name", "description"]);
    await expect(updatePlan(t.db, { planKey: p.key, expectedVersion: p.version, name: "Other", actor, reason: "r" })).rejects.toMatchObject({
      code: "conflict",
      currentVersion: p.version + 1,
    });
    await expect(
      updatePlan(t.db, { planKey: p.key, expectedVersion: p.version + 1, name: "Pro 2024", description: "paid", actor, reason: "r" }),
    ).rejects.toMatchObject({ code: "unchanged" });
    expect((await readPlan(t.db, p.key)).plan).toMatchObject({ name: "Pro 2024", description: "paid" });
  });

  it("sets a value on a per-caller ceiling inside its bounds, clamped and logged; removes it", async () => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    const set = await setPlanValue(t.db, {
      planKey: p.key,
      target: { ceilingId: e.caller.id },
      input: "40",
      actor,
      changeControl: control,
      reason: "pro is 40",
    });
    expect(set).toMatchObject({ previous: null, applied: 40, clamped: null, own: 10 });
    // 40 → 5000 is a raise past 5x: typed twice; clamped to the max 1000.
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "5000", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "confirmation_required" });
    const clamped = await setPlanValue(t.db, {
      planKey: p.key,
      target: { ceilingId: e.caller.id },
      input: "5000",
      confirm: "5000",
      actor,
      changeControl: control,
      reason: "r",
    });
    expect(clamped).toMatchObject({ previous: 40, applied: 1000, clamped: "max" });
    const detail = await readPlan(t.db, p.key);
    expect(detail.ceilings.find((c) => c.ceilingId === e.caller.id)).toMatchObject({ planValue: 1000, ceilingValue: 10, min: 1, max: 1000 });
    // The global ceiling is not listed: a plan sets nothing there.
    expect(detail.ceilings.some((c) => c.ceilingId === e.global.id)).toBe(false);
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "1000", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "unchanged" });
    const removed = await removePlanValue(t.db, {
      planKey: p.key,
      target: { ceilingId: e.caller.id },
      actor,
      changeControl: control,
      reason: "back to the ceiling's",
    });
    expect(removed).toMatchObject({ previous: 1000, applied: null });
    await expect(
      removePlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_found" });
    const events = await planAudit(t.db, p.key);
    expect(events.map((x) => x.action)).toEqual(["plan.create", "plan.value.set", "plan.value.set", "plan.value.remove"]);
    expect(events[2]).toMatchObject({
      rawInput: "5000",
      previousValue: 40,
      appliedValue: 1000,
      clamped: true,
      endpointKey: e.key,
      ceilingId: e.caller.id,
      reason: "r",
    });
    expect((await readPlan(t.db, p.key)).plan.version).toBe(p.version + 3);
  });

  it("compares a raise with the ceiling's own value when the plan sets none", async () => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    // The ceiling's own is 10: 49 is under 5x, 50 is 5x.
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "50", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "confirmation_required" });
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "50", confirm: "49", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "confirmation_required" });
    expect(
      await setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "49", actor, changeControl: control, reason: "r" }),
    ).toMatchObject({ applied: 49 });
    // 0 refuses the plan's accounts; a raise from 0 is typed twice.
    expect(
      await setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "0", actor, changeControl: control, reason: "r" }),
    ).toMatchObject({ applied: 0 });
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "5", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "confirmation_required" });
  });

  it.each(["1e9", "500abc", "-5", "", "12.5"])("refuses %j on a ceiling: nothing saved, the attempt audited as plan.rejected", async (input) => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    const before = await planSnapshot(t.db);
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input, actor, changeControl: control, reason: "typo" }),
    ).rejects.toMatchObject({ code: "invalid_input", problems: [{ path: "input" }] });
    expect(await planSnapshot(t.db)).toEqual(before);
    const rejected = (await planAudit(t.db, p.key)).filter((x) => x.action === "plan.rejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ rawInput: input, appliedValue: null, ceilingId: e.caller.id, reason: "typo" });
  });

  it.each(["1e9", "500abc", "-5", "", "1.0000001"])("refuses %j on a budget: nothing saved, the attempt audited", async (input) => {
    const p = await plan();
    const b = await budgetOn(t.db);
    const before = await planSnapshot(t.db);
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { budgetKey: b.key }, input, actor, changeControl: control, reason: "typo" }),
    ).rejects.toMatchObject({ code: "invalid_input" });
    expect(await planSnapshot(t.db)).toEqual(before);
    expect((await planAudit(t.db, p.key)).filter((x) => x.action === "plan.rejected")).toMatchObject([{ rawInput: input, details: { budgetKey: b.key } }]);
  });

  it("sets money on a per-account budget, clamped into its bounds", async () => {
    const p = await plan();
    const b = await budgetOn(t.db);
    expect(await setPlanValue(t.db, { planKey: p.key, target: { budgetKey: b.key }, input: "5.50", actor, changeControl: control, reason: "r" })).toMatchObject(
      { previous: null, applied: 5_500_000, currency: "USD" },
    );
    expect(await setPlanValue(t.db, { planKey: p.key, target: { budgetKey: b.key }, input: "0.25", actor, changeControl: control, reason: "r" })).toMatchObject(
      { applied: DOLLAR, clamped: "min" },
    );
    expect((await readPlan(t.db, p.key)).budgets.find((x) => x.budgetKey === b.key)).toMatchObject({ planValue: DOLLAR, budgetValue: 2 * DOLLAR });
  });

  it("refuses a value on a global ceiling or budget, and on an unknown plan, ceiling or budget; nothing saved", async () => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    const g = await budgetOn(t.db, "global");
    const before = await planSnapshot(t.db);
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.global.id }, input: "20", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_per_caller" });
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { budgetKey: g.key }, input: "3", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_per_caller" });
    await expect(
      setPlanValue(t.db, { planKey: "nope", target: { ceilingId: e.caller.id }, input: "20", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_found", message: "no plan 'nope'" });
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { ceilingId: 9_999_999 }, input: "20", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_found" });
    await expect(
      setPlanValue(t.db, { planKey: p.key, target: { budgetKey: "llm.nowhere" }, input: "3", actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_found" });
    await expect(
      removePlanValue(t.db, { planKey: "nope", target: { ceilingId: e.caller.id }, actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_found" });
    expect(await planSnapshot(t.db)).toEqual(before);
  });

  it("switching the default keeps exactly one default, and counts accounts on each plan", async () => {
    const a = await plan("a");
    const b = await plan("b");
    await t.db
      .insert(accounts)
      .values([{ account: `acct-${a.key}-1`, planId: a.id }, { account: `acct-${a.key}-2`, planId: a.id }, { account: `acct-${a.key}-3` }]);
    const initial = (await listPlans(t.db)).find((x) => x.isDefault);
    expect(initial?.key).toBe("default");
    expect((await listPlans(t.db)).find((x) => x.key === a.key)?.accounts).toBe(2);
    const r = await setDefaultPlan(t.db, { planKey: b.key, actor, changeControl: control, reason: "b for all" });
    expect(r).toEqual({ key: b.key, previous: "default" });
    await expect(setDefaultPlan(t.db, { planKey: b.key, actor, changeControl: control, reason: "r" })).rejects.toMatchObject({ code: "unchanged" });
    // Two switches at once: one default after both.
    await Promise.all([
      setDefaultPlan(t.db, { planKey: a.key, actor, changeControl: control, reason: "r" }),
      setDefaultPlan(t.db, { planKey: "default", actor, changeControl: control, reason: "r" }),
    ]);
    const defaults = await t.db.select().from(plans).where(eq(plans.isDefault, true));
    expect(defaults).toHaveLength(1);
    const listed = await listPlans(t.db);
    const unassigned =
      (
        await t.db
          .select({ n: sql<number>`count(*)::int` })
          .from(accounts)
          .where(sql`${accounts.planId} is null`)
      )[0]?.n ?? 0;
    const def = listed.find((x) => x.isDefault);
    expect(def?.accounts).toBe(unassigned + (def?.key === a.key ? 2 : 0));
    expect((await planAudit(t.db, b.key)).map((x) => x.action)).toEqual(["plan.create", "plan.default"]);
    await setDefaultPlan(t.db, { planKey: "default", actor, changeControl: control, reason: "back" }).catch(() => undefined);
  });

  it("counts the default plan's accounts exactly on a small table, and estimates them from the table's statistics on a large one", async () => {
    expect((await listPlans(t.db)).find((x) => x.isDefault)?.approximate).toBe(false);
    const count = async (where: ReturnType<typeof sql>) =>
      (
        await t.db
          .select({ n: sql<number>`count(*)::int` })
          .from(accounts)
          .where(where)
      )[0]?.n ?? 0;
    await t.db.insert(accounts).values([{ account: "acct-estimated-1" }, { account: "acct-estimated-2" }]);
    // Autovacuum's analyze, as the owner (the app role may not analyze a table it does not own).
    await t.ownerDb.execute(sql`analyze accounts`);
    // Past the threshold (a million accounts in production; 1 here) the count is the statistics'
    // row estimate less the assigned accounts: exact right after an analyze of a small table.
    expect(await unassignedAccounts(t.db, 1)).toEqual({ n: await count(sql`${accounts.planId} is null`), approximate: true });
    expect(await unassignedAccounts(t.db)).toEqual({ n: await count(sql`${accounts.planId} is null`), approximate: false });
  });

  it("refuses to delete a plan accounts are on, or the default; deletes an empty one with its values, audited", async () => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    await setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "20", actor, changeControl: control, reason: "r" });
    await t.db.insert(accounts).values({ account: `acct-${p.key}`, planId: p.id });
    const before = await planSnapshot(t.db);
    await expect(deletePlan(t.db, { planKey: p.key, actor, reason: "r" })).rejects.toMatchObject({
      code: "in_use",
      message: `1 account(s) are on ${p.key}: assign them another plan first`,
    });
    await expect(deletePlan(t.db, { planKey: "default", actor, reason: "r" })).rejects.toMatchObject({ code: "in_use" });
    await expect(deletePlan(t.db, { planKey: "nope", actor, reason: "r" })).rejects.toMatchObject({ code: "not_found" });
    expect(await planSnapshot(t.db)).toEqual(before);
    await t.db
      .update(accounts)
      .set({ planId: null })
      .where(eq(accounts.account, `acct-${p.key}`));
    await deletePlan(t.db, { planKey: p.key, actor, reason: "retired" });
    expect(await planValuesOn(t.db, "ceiling", e.caller.id)).toEqual([]);
    const [deleted] = (await planAudit(t.db, p.key)).filter((x) => x.action === "plan.delete");
    expect(deleted?.details).toMatchObject({ ceilingValues: [{ ceilingId: e.caller.id, value: 20 }] });
  });

  it("new ceiling bounds clamp the plans' values in the same transaction, each logged", async () => {
    const p = await plan();
    const q = await plan();
    const e = await perCallerEndpoint(t.db);
    await setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "40", actor, changeControl: control, reason: "r" });
    await setPlanValue(t.db, { planKey: q.key, target: { ceilingId: e.caller.id }, input: "0", actor, changeControl: control, reason: "blocked tier" });
    await setBounds(t.db, { ceilingId: e.caller.id, min: "1", max: "20", expectedVersion: e.caller.version, actor, reason: "tighter" });
    const values = await readPlan(t.db, p.key);
    expect(values.ceilings.find((c) => c.ceilingId === e.caller.id)?.planValue).toBe(20);
    // 0 stays 0: it refuses, it is not a value to clamp.
    expect((await readPlan(t.db, q.key)).ceilings.find((c) => c.ceilingId === e.caller.id)?.planValue).toBe(0);
    const [clamped] = (await planAudit(t.db, p.key)).filter((x) => x.action === "plan.value.clamped");
    expect(clamped).toMatchObject({
      previousValue: 40,
      appliedValue: 20,
      clamped: true,
      ceilingId: e.caller.id,
      reason: "tighter",
      details: { clampedTo: "max" },
    });
    expect((await planAudit(t.db, q.key)).some((x) => x.action === "plan.value.clamped")).toBe(false);
  });

  it("new budget bounds clamp the plans' values on it", async () => {
    const p = await plan();
    const b = await budgetOn(t.db);
    await setPlanValue(t.db, { planKey: p.key, target: { budgetKey: b.key }, input: "1.50", actor, changeControl: control, reason: "r" });
    const { budget, spec } = await readBudget(t.db, b.key);
    const members = spec.members;
    await updateBudget(t.db, {
      key: b.key,
      expectedVersion: budget.version,
      fields: { name: "LLM", members, min: 2 * DOLLAR, max: 10 * DOLLAR, default: 2 * DOLLAR },
      actor,
      reason: "floor",
    });
    expect((await readPlan(t.db, p.key)).budgets.find((x) => x.budgetKey === b.key)?.planValue).toBe(2 * DOLLAR);
    expect((await planAudit(t.db, p.key)).filter((x) => x.action === "plan.value.clamped")).toMatchObject([
      { previousValue: 1_500_000, appliedValue: 2 * DOLLAR, details: { budgetKey: b.key, clampedTo: "min" } },
    ]);
  });

  /**
   * Holds one endpoint's lock shared, as a reservation batch in flight does, while `edit` runs: the
   * edit must wait for it (so it binds the next batch, never half of one) and commit after it.
   */
  async function waitsForBatchOn(endpointId: number, edit: () => Promise<unknown>, unchanged: () => Promise<unknown>) {
    const batch = await holdTransaction(t.db, (tx) => tx.execute(sql`select pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(${endpointId}))`));
    const before = await unchanged();
    let done = false;
    const running = edit().then(() => (done = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(done).toBe(false);
    expect(await unchanged()).toEqual(before);
    await batch.release();
    await running;
    expect(done).toBe(true);
  }

  it("a value on a ceiling waits for a batch in flight on its endpoint", async () => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    await waitsForBatchOn(
      e.endpointId,
      () => setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "20", actor, changeControl: control, reason: "r" }),
      async () => (await readPlan(t.db, p.key)).plan.version,
    );
  });

  it("a value on a budget waits for a batch in flight on a member", async () => {
    const p = await plan();
    const b = await budgetOn(t.db);
    const [member] = (await readBudget(t.db, b.key)).members;
    await waitsForBatchOn(
      member?.id ?? 0,
      () => setPlanValue(t.db, { planKey: p.key, target: { budgetKey: b.key }, input: "3", actor, changeControl: control, reason: "r" }),
      async () => (await readPlan(t.db, p.key)).plan.version,
    );
  });

  it("switching the default and deleting a plan wait for a batch in flight on any endpoint a plan can bind", async () => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    await waitsForBatchOn(
      e.endpointId,
      () => setDefaultPlan(t.db, { planKey: p.key, actor, changeControl: control, reason: "r" }),
      async () => (await listPlans(t.db)).find((x) => x.isDefault)?.key,
    );
    await setDefaultPlan(t.db, { planKey: "default", actor, changeControl: control, reason: "back" });
    await waitsForBatchOn(
      e.endpointId,
      () => deletePlan(t.db, { planKey: p.key, actor, reason: "r" }),
      async () => (await listPlans(t.db)).some((x) => x.key === p.key),
    );
  });

  it("removing a ceiling takes the plans' values on it, and its event keeps them", async () => {
    const p = await plan();
    const e = await perCallerEndpoint(t.db);
    await setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "25", actor, changeControl: control, reason: "r" });
    await removeCeiling(t.db, { key: e.key, ceilingId: e.caller.id, actor, reason: "gone" });
    expect(await t.db.select().from(planLimitValues).where(eq(planLimitValues.limitId, e.caller.limitId))).toEqual([]);
    const [removed] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "ceiling.remove"), eq(auditEvents.ceilingId, e.caller.id)));
    expect(removed?.details).toMatchObject({ planValues: [{ plan: p.key, value: 25 }] });
  });

  it("an edit of a plan does not hold up an assignment to it; a delete is refused at once while one is in flight, and then because it has accounts", async () => {
    const p = await plan();
    // A value edit holding the plan's row (lockedPlan): an account assigned meanwhile is not kept waiting.
    const edit = await holdTransaction(t.db, (tx) => lockedPlan(tx, p.key));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("the assignment waited for the plan edit")), 2000)));
    await Promise.race([t.db.insert(accounts).values({ account: `acct-edit-${p.key}`, planId: p.id }), waited]).finally(async () => {
      clearTimeout(timer);
      await edit.release();
    });
    await t.db.delete(accounts).where(eq(accounts.account, `acct-edit-${p.key}`));
    // An assignment in flight: the delete, holding every endpoint lock, does not wait for it (that
    // would hold up every batch); it is refused at once, and after the commit the account is on it.
    const assignment = await holdTransaction(t.db, (tx) => tx.insert(accounts).values({ account: `acct-late-${p.key}`, planId: p.id }));
    const started = Date.now();
    await expect(deletePlan(t.db, { planKey: p.key, actor, reason: "r" })).rejects.toMatchObject({
      code: "in_use",
      message: expect.stringContaining("being written"),
    });
    expect(Date.now() - started).toBeLessThan(900);
    await assignment.release();
    await expect(deletePlan(t.db, { planKey: p.key, actor, reason: "r" })).rejects.toMatchObject({
      code: "in_use",
      message: expect.stringContaining("account(s) are on"),
    });
  });

  it("asks for the own value twice when removing a plan's value raises its accounts 5x or more, as setting it would", async () => {
    const e = await perCallerEndpoint(t.db);
    const p = await plan("low");
    // The ceiling's own value is 10; the plan is at 2: removing it is a 5x raise.
    await setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "2", actor, changeControl: control, reason: "trial" });
    await expect(
      removePlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, actor, changeControl: control, reason: "r" }),
    ).rejects.toMatchObject({
      code: "confirmation_required",
      message: expect.stringContaining("must be exactly 10"),
    });
    await expect(
      removePlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, actor, changeControl: control, reason: "r", confirm: "9" }),
    ).rejects.toMatchObject({ code: "confirmation_required" });
    const removed = await removePlanValue(t.db, {
      planKey: p.key,
      target: { ceilingId: e.caller.id },
      actor,
      changeControl: control,
      reason: "r",
      confirm: "10",
    });
    expect(removed).toMatchObject({ previous: 2, applied: null, own: 10 });
    // Below 5x no retype: 3 -> 10.
    await setPlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, input: "3", actor, changeControl: control, reason: "trial" });
    await removePlanValue(t.db, { planKey: p.key, target: { ceilingId: e.caller.id }, actor, changeControl: control, reason: "r" });
  });
});
