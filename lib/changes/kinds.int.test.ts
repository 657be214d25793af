import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ceilings, changeRequests, raiseEnds, scheduledChanges } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { adjustBudget, createBudget, setBudgetArchived, updateBudget } from "@/lib/budgets";
import { readBudget } from "@/lib/budgets/read";
import { addCeiling, createEndpoint, setEndpointArchived, updateEndpoint } from "@/lib/catalog";
import { readCatalogEndpoint } from "@/lib/catalog/read";
import { setBounds } from "@/lib/ceilings/bounds";
import { first as only, readCeiling } from "@/lib/ceilings/test-fixtures";
import { setupControl } from "@/lib/control/context";
import { approveChange, pendingForEndpoint, requestChange, type ChangeKind, type Requester } from "./index";
import { staffMember } from "./test-fixtures";

// Each kind of request applies through the direct edit's write code when nothing moved, and goes
// stale (nothing applied) when what it was asked against changed in between. The worst case each
// records is the endpoint's a day in units and money (lib/catalog/worst-case.ts), a budget's value.

const DOLLAR = 1_000_000;
const actor = { type: "staff", email: "oncall@test.local" } as const;
let n = 0;

describe.skipIf(skipWithoutDatabase())("change request kinds", () => {
  const t = useTestDatabase("changes_kinds");

  /** An endpoint at $0.01 a unit: day 100 units (bounds 0..150), month 3,000; per-call max 1. */
  async function endpoint(over: Record<string, unknown> = {}) {
    n += 1;
    const key = `sms.k${n}-${Date.now().toString(36)}`;
    const row = await createEndpoint(t.db, {
      spec: {
        key,
        name: key,
        unit: "messages",
        parts: [{ name: "units", price: "0.01" }],
        perCallMax: 1,
        ceilings: [
          { metric: "units", scope: "global", window: "utc_day", value: 100, min: 0, max: 150, default: 100 },
          { metric: "units", scope: "global", window: "billing_month", value: 3000, min: 0, max: 3000, default: 3000 },
        ],
        ...over,
      },
      actor,
      reason: "setup",
    });
    const rows = await t.db.select().from(ceilings).where(eq(ceilings.endpointId, row.id)).orderBy(ceilings.id);
    return { key, id: row.id, day: only(rows) };
  }

  async function budget() {
    const e = await endpoint();
    n += 1;
    const row = await createBudget(t.db, {
      spec: {
        key: `llm.kb${n}-${Date.now().toString(36)}`,
        name: "b",
        scope: "global",
        window: "utc_day",
        value: 200 * DOLLAR,
        min: 0,
        max: 500 * DOLLAR,
        default: 200 * DOLLAR,
        members: [e.key],
      },
      actor,
      reason: "setup",
    });
    return { key: row.key, id: row.id, member: e.key };
  }

  async function people(): Promise<{ asker: Requester; approver: Requester }> {
    return { asker: await staffMember(t.db, "operator"), approver: await staffMember(t.db, "admin") };
  }

  async function ask(kind: ChangeKind, change: Record<string, unknown>, extra: Partial<Parameters<typeof requestChange>[1]> = {}) {
    const { asker, approver } = await people();
    const request = await requestChange(t.db, { kind, change, requester: asker, reason: "launch", ...extra });
    return { request, approve: () => approveChange(t.db, { id: request.id, approver }) };
  }

  it("ceiling.value: worst case a day in units and money both ways; an end is recorded for timing", async () => {
    const e = await endpoint();
    const { request, approve } = await ask("ceiling.value", { ceilingId: e.day.id, value: 120 }, { endsAfterSeconds: 7200 });
    // 100 messages at $0.01 = $1.00 a day; 120 = $1.20.
    expect(request).toMatchObject({
      worstCaseBefore: 100,
      worstCaseAfter: 120,
      worstMoneyBefore: 1 * DOLLAR,
      worstMoneyAfter: 1.2 * DOLLAR,
      currency: "USD",
      endsAfterSeconds: 7200,
    });
    expect(request.summary).toBe(`${e.key} units/day 100 → 120`);
    const before = Date.now();
    expect(await approve()).toMatchObject({ applied: true });
    expect(await readCeiling(t.db, e.day.id)).toMatchObject({ value: 120 });
    const end = only(await t.db.select().from(raiseEnds).where(eq(raiseEnds.requestId, request.id)));
    expect(end).toMatchObject({ ceilingId: e.day.id, revertTo: 100, raisedTo: 120, state: "active" });
    // The version the raise left: the end reverts only while nothing else was written since.
    expect(end.raisedVersion).toBe((await readCeiling(t.db, e.day.id)).version);
    expect(end.endsAt.getTime()).toBeGreaterThanOrEqual(before + 7200 * 1000 - 1000);
  });

  it("ceiling.value on a killed ceiling counts against the value before the kill", async () => {
    const e = await endpoint();
    await t.db.update(ceilings).set({ value: 0, valueBeforeKill: 100 }).where(eq(ceilings.id, e.day.id));
    const { asker } = await people();
    // Back to 100 or below: a restore, not a raise.
    await expect(
      requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: e.day.id, value: 100 }, requester: asker, reason: "r" }),
    ).rejects.toMatchObject({ code: "not_a_raise" });
    const { request } = await ask("ceiling.value", { ceilingId: e.day.id, value: 140 });
    expect(request.summary).toBe(`${e.key} units/day killed (restores to 100) → 140`);
    expect(request).toMatchObject({ worstCaseBefore: 0, worstCaseAfter: 140 });
  });

  it("ceiling.bounds applies the new max; a lower max set meanwhile makes it stale", async () => {
    const e = await endpoint();
    const first = await ask("ceiling.bounds", { ceilingId: e.day.id, min: 0, max: 300 });
    expect(await first.approve()).toMatchObject({ applied: true });
    expect(await readCeiling(t.db, e.day.id)).toMatchObject({ maxValue: 300, value: 100 });
    const second = await ask("ceiling.bounds", { ceilingId: e.day.id, min: 0, max: 600 });
    const c = await readCeiling(t.db, e.day.id);
    await setBounds(t.db, { ceilingId: e.day.id, min: "0", max: "200", expectedVersion: c.version, actor, reason: "tighter" });
    const stale = await second.approve();
    expect(stale).toMatchObject({ applied: false, request: { state: "stale" } });
    expect(stale.message).toMatch(/max 300 → 200/);
    expect(await readCeiling(t.db, e.day.id)).toMatchObject({ maxValue: 200 });
  });

  it("ceiling.add adds the ceiling above its default; one of the same kind added meanwhile makes it stale", async () => {
    const e = await endpoint();
    const spec = { metric: "units", scope: "caller", window: "utc_day", value: 20, min: 0, max: 50, default: 10 };
    const first = await ask("ceiling.add", { endpointKey: e.key, ceiling: spec });
    expect(first.request).toMatchObject({ worstCaseBefore: 100, worstCaseAfter: 100 });
    expect(await first.approve()).toMatchObject({ applied: true });
    expect((await readCatalogEndpoint(t.db, e.key)).ceilings.find((c) => c.scope === "caller")).toMatchObject({ value: 20, defaultValue: 10 });

    const other = await endpoint();
    const second = await ask("ceiling.add", { endpointKey: other.key, ceiling: spec });
    await addCeiling(t.db, { key: other.key, ceiling: { ...spec, value: 10 }, actor, reason: "at its default" });
    expect(await second.approve()).toMatchObject({ applied: false, request: { state: "stale" } });
    expect((await readCatalogEndpoint(t.db, other.key)).ceilings.find((c) => c.scope === "caller")).toMatchObject({ value: 10 });
  });

  it("endpoint.per_call_max: the worst case of a calls ceiling grows with it; a lowering meanwhile makes it stale", async () => {
    const e = await endpoint({ perCallMax: 2, ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 50, min: 0, max: 100, default: 50 }] });
    const first = await ask("endpoint.per_call_max", { endpointKey: e.key, perCallMax: 4 });
    // 50 calls × 2 units = 100 units ($1.00) → × 4 = 200 units ($2.00).
    expect(first.request).toMatchObject({ worstCaseBefore: 100, worstCaseAfter: 200, worstMoneyBefore: 1 * DOLLAR, worstMoneyAfter: 2 * DOLLAR });
    expect(await first.approve()).toMatchObject({ applied: true });
    const now = await readCatalogEndpoint(t.db, e.key);
    expect(now.endpoint.perCallMax).toBe(4);
    const second = await ask("endpoint.per_call_max", { endpointKey: e.key, perCallMax: 6 });
    const fields = { name: e.key, unit: "messages", parts: [{ name: "units", price: "0.01" }], perCallMax: 3 };
    await updateEndpoint(t.db, { key: e.key, expectedVersion: now.endpoint.version, fields, actor, reason: "smaller calls" });
    expect(await second.approve()).toMatchObject({ applied: false, request: { state: "stale" } });
    expect((await readCatalogEndpoint(t.db, e.key)).endpoint.perCallMax).toBe(3);
  });

  it("endpoint.unarchive: from a worst case of nothing; a second request for it goes stale once the first applied", async () => {
    const e = await endpoint();
    await setEndpointArchived(t.db, { key: e.key, archived: true, actor, reason: "retired" });
    const first = await ask("endpoint.unarchive", { endpointKey: e.key });
    const second = await ask("endpoint.unarchive", { endpointKey: e.key });
    expect(first.request).toMatchObject({ worstCaseBefore: 0, worstMoneyBefore: 0, worstCaseAfter: 100, worstMoneyAfter: 1 * DOLLAR });
    expect(await first.approve()).toMatchObject({ applied: true });
    expect((await readCatalogEndpoint(t.db, e.key)).endpoint.archivedAt).toBeNull();
    expect(await second.approve()).toMatchObject({ applied: false, request: { state: "stale" } });
  });

  it("budget.value: the worst case is the value in money; a lowering meanwhile makes it stale; an end is recorded", async () => {
    const b = await budget();
    const first = await ask("budget.value", { budgetKey: b.key, value: 300 * DOLLAR }, { endsAt: new Date(Date.now() + 3_600_000) });
    expect(first.request).toMatchObject({
      worstCaseBefore: null,
      worstCaseAfter: null,
      worstMoneyBefore: 200 * DOLLAR,
      worstMoneyAfter: 300 * DOLLAR,
      currency: "USD",
      budgetId: b.id,
    });
    expect(first.request.summary).toBe(`budget ${b.key} $200.00 → $300.00`);
    // Waiting, it shows on its members' pages.
    const member = await readCatalogEndpoint(t.db, b.member);
    expect((await pendingForEndpoint(t.db, member.endpoint.id)).map((r) => r.id)).toEqual([first.request.id]);
    expect(await first.approve()).toMatchObject({ applied: true });
    expect((await readBudget(t.db, b.key)).budget.value).toBe(300 * DOLLAR);
    expect(await pendingForEndpoint(t.db, member.endpoint.id)).toEqual([]);
    const raisedVersion = (await readBudget(t.db, b.key)).budget.version;
    expect(await t.db.select().from(raiseEnds).where(eq(raiseEnds.requestId, first.request.id))).toMatchObject([
      { budgetId: b.id, revertTo: 200 * DOLLAR, raisedTo: 300 * DOLLAR, raisedVersion },
    ]);
    const second = await ask("budget.value", { budgetKey: b.key, value: 400 * DOLLAR });
    const { budget: row } = await readBudget(t.db, b.key);
    await adjustBudget(t.db, { key: b.key, input: "250", expectedVersion: row.version, actor, reason: "cost" });
    expect(await second.approve()).toMatchObject({ applied: false, request: { state: "stale" } });
    expect((await readBudget(t.db, b.key)).budget.value).toBe(250 * DOLLAR);
  });

  it("budget.bounds applies a higher max; a lower max set meanwhile makes it stale", async () => {
    const b = await budget();
    const first = await ask("budget.bounds", { budgetKey: b.key, min: 0, max: 1000 * DOLLAR });
    expect(await first.approve()).toMatchObject({ applied: true });
    expect((await readBudget(t.db, b.key)).budget.maxValue).toBe(1000 * DOLLAR);
    const second = await ask("budget.bounds", { budgetKey: b.key, min: 0, max: 2000 * DOLLAR });
    const now = await readBudget(t.db, b.key);
    await updateBudget(t.db, {
      key: b.key,
      expectedVersion: now.budget.version,
      fields: { name: "b", members: [b.member], min: 0, max: 800 * DOLLAR, default: 200 * DOLLAR },
      actor,
      reason: "tighter",
    });
    expect(await second.approve()).toMatchObject({ applied: false, request: { state: "stale" } });
    expect((await readBudget(t.db, b.key)).budget.maxValue).toBe(800 * DOLLAR);
  });

  it("budget.value from a request that predates bounds in its before: held to the value it showed, so a lower max meanwhile makes it stale", async () => {
    const b = await budget();
    const asked = await ask("budget.value", { budgetKey: b.key, value: 300 * DOLLAR });
    // A row written before bounds were part of what a value request was asked against.
    await t.db
      .update(changeRequests)
      .set({ before: { value: 200 * DOLLAR, valueBeforeKill: null } })
      .where(eq(changeRequests.id, asked.request.id));
    const now = await readBudget(t.db, b.key);
    await updateBudget(t.db, {
      key: b.key,
      expectedVersion: now.budget.version,
      fields: { name: "b", members: [b.member], min: 0, max: 250 * DOLLAR, default: 200 * DOLLAR },
      actor,
      reason: "tighter",
    });
    // $300.00 would now be clamped to $250.00: not what the approver was shown.
    const result = await asked.approve();
    expect(result).toMatchObject({ applied: false, request: { state: "stale" } });
    expect(result.message).toMatch(/\$300\.00 would not apply as \$300\.00 now/);
    expect((await readBudget(t.db, b.key)).budget.value).toBe(200 * DOLLAR);
  });

  it("budget.unarchive and budget.create apply; a budget created meanwhile under the same key makes the create stale", async () => {
    const b = await budget();
    await setBudgetArchived(t.db, { key: b.key, archived: true, actor, reason: "old" });
    const unarchive = await ask("budget.unarchive", { budgetKey: b.key });
    expect(await unarchive.approve()).toMatchObject({ applied: true });
    expect((await readBudget(t.db, b.key)).spec.archived).toBe(false);

    const e = await endpoint();
    const spec = {
      key: `llm.new${(n += 1)}`,
      name: "new",
      scope: "global",
      window: "utc_day",
      value: 300 * DOLLAR,
      min: 0,
      max: 500 * DOLLAR,
      default: 100 * DOLLAR,
      members: [e.key],
    };
    await expect(createBudget(t.db, { spec, actor, reason: "r" })).rejects.toMatchObject({ code: "approval_required", ask: { kind: "budget.create" } });
    const create = await ask("budget.create", { spec });
    expect(create.request).toMatchObject({ worstMoneyBefore: null, worstMoneyAfter: 300 * DOLLAR });
    expect(await create.approve()).toMatchObject({ applied: true });
    expect((await readBudget(t.db, spec.key)).budget.value).toBe(300 * DOLLAR);

    const again = { ...spec, key: `llm.new${(n += 1)}` };
    const late = await ask("budget.create", { spec: again });
    await createBudget(t.db, { spec: { ...again, value: 100 * DOLLAR }, actor, reason: "at its default" });
    expect(await late.approve()).toMatchObject({ applied: false, request: { state: "stale" } });
    expect((await readBudget(t.db, again.key)).budget.value).toBe(100 * DOLLAR);
  });

  it("schedule: approving makes the schedule due; one cancelled meanwhile makes it stale", async () => {
    const e = await endpoint();
    const schedule = async () => {
      const rows = await t.db
        .insert(scheduledChanges)
        .values({
          endpointId: e.id,
          ceilingId: e.day.id,
          action: "value",
          value: 140,
          runAt: new Date(Date.now() + 3_600_000),
          state: "awaiting_approval",
          reason: "night",
          createdBy: "x@test.local",
        })
        .returning();
      return only(rows);
    };
    const s1 = await schedule();
    const first = await ask("schedule", { scheduleId: s1.id });
    expect(first.request.summary).toMatch(new RegExp(`^${e.key.replace(/\./g, "\\.")} scheduled units/day 140 at `));
    expect(await first.approve()).toMatchObject({ applied: true });
    expect((await t.db.select().from(scheduledChanges).where(eq(scheduledChanges.id, s1.id)))[0]).toMatchObject({ state: "scheduled" });
    const s2 = await schedule();
    const second = await ask("schedule", { scheduleId: s2.id });
    await t.db.update(scheduledChanges).set({ state: "cancelled" }).where(eq(scheduledChanges.id, s2.id));
    expect(await second.approve()).toMatchObject({ applied: false, request: { state: "stale" } });
    expect(await readCeiling(t.db, e.day.id)).toMatchObject({ value: 100 });
  });

  it("setupControl is the only way around: a plain object claiming to be one is refused", async () => {
    const e = await endpoint();
    const forged = { requestId: 1, requestedBy: "x", breakGlass: false, setup: true };
    const { adjustCeiling } = await import("@/lib/ceilings/adjust");
    await expect(
      adjustCeiling(t.db, { ceilingId: e.day.id, input: "120", expectedVersion: e.day.version, actor, reason: "r", changeControl: forged as never }),
    ).rejects.toMatchObject({ code: "approval_required" });
    const done = await adjustCeiling(t.db, {
      ceilingId: e.day.id,
      input: "120",
      expectedVersion: e.day.version,
      actor,
      reason: "r",
      changeControl: setupControl("test"),
    });
    expect(done.applied).toBe(120);
    const [event] = (await t.db.execute(sql`select details from audit_events where ceiling_id = ${e.day.id} and action = 'ceiling.adjust'`)) as unknown as {
      details: Record<string, unknown>;
    }[];
    expect(event?.details).toMatchObject({ changeControl: "setup: test" });
  });
});
