import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, budgets, ceilings, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { addStaff, changeStaffRole } from "@/lib/auth/staff-admin";
import { createBudget } from "@/lib/budgets/create";
import { restoreBudget } from "@/lib/budgets/kill";
import { updateBudget } from "@/lib/budgets/update";
import { applyCatalog, exportCatalog } from "@/lib/catalog/file";
import { addCeiling, createEndpoint, removeCeiling } from "@/lib/catalog/change";
import { setBounds } from "@/lib/ceilings/bounds";
import { killEndpoint, restoreEndpoint } from "@/lib/ceilings/kill";
import { acknowledgeBreakGlass, approveChange, breakGlass, rejectChange, requestChange } from "./index";
import { staffMember } from "./test-fixtures";

// The ways round "a raise takes two people" found in review: an approval applying something other
// than what the request showed, a default pulled up (what a restore brings back), a raise end on a
// killed ceiling, an approver the requester made, a new endpoint or a re-added ceiling above what
// was in force. Each test fails with its guard removed.

let n = 0;

describe.skipIf(skipWithoutDatabase())("raise paths: a raise takes two people", () => {
  const t = useTestDatabase("raise_paths", { max: 8 });

  async function endpoint(c: { value: number; min?: number; max?: number; default?: number }) {
    n += 1;
    const key = `rp.e${n}`;
    const admin = await staffMember(t.db, "admin");
    const e = await createEndpoint(t.db, {
      spec: {
        key,
        name: key,
        unit: "units",
        parts: [{ name: "units", price: "0.000001" }],
        perCallMax: 10,
        ceilings: [
          { metric: "units", scope: "global", window: "utc_day", value: c.value, min: c.min ?? 0, max: c.max ?? 100_000, default: c.default ?? c.value },
        ],
      },
      actor: { type: "staff", email: admin.email },
      reason: "fixture",
    });
    const [ceiling] = await t.db.select().from(ceilings).where(eq(ceilings.endpointId, e.id));
    if (!ceiling) throw new Error("no ceiling");
    return { key, endpointId: e.id, ceiling, admin };
  }
  function one<T>(rows: T[]): T {
    const [row] = rows;
    if (!row) throw new Error("no row");
    return row;
  }
  const valueOf = async (id: number) => one(await t.db.select().from(ceilings).where(eq(ceilings.id, id)));

  it("an approval applies the value the request showed; a max moved since makes it stale, never the typed value", async () => {
    const { ceiling } = await endpoint({ value: 100, max: 300 });
    const a = await staffMember(t.db, "operator");
    const b = await staffMember(t.db, "admin");
    const r1 = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: ceiling.id, value: 1000 }, requester: a, reason: "a bit more" });
    expect(r1.after).toEqual({ value: 300 });
    const r2 = await requestChange(t.db, {
      kind: "ceiling.bounds",
      change: { ceilingId: ceiling.id, min: 0, max: 5000 },
      requester: a,
      reason: "room for later",
    });
    await approveChange(t.db, { id: r2.id, approver: b });
    const res = await approveChange(t.db, { id: r1.id, approver: b });
    expect(res.applied).toBe(false);
    expect(res.request.state).toBe("stale");
    expect(res.message).toContain("max");
    expect((await valueOf(ceiling.id)).value).toBe(100);
  });

  it("an approval of a clamped value applies the clamped value (the request's after) when nothing moved", async () => {
    const { ceiling } = await endpoint({ value: 100, max: 300 });
    const a = await staffMember(t.db, "operator");
    const b = await staffMember(t.db, "admin");
    const r = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: ceiling.id, value: 1000 }, requester: a, reason: "a bit more" });
    const res = await approveChange(t.db, { id: r.id, approver: b });
    expect(res.applied).toBe(true);
    expect((await valueOf(ceiling.id)).value).toBe(300);
  });

  it("a budget value request goes stale when its bounds moved since it was asked", async () => {
    const { key } = await endpoint({ value: 100 });
    const admin = await staffMember(t.db, "admin");
    const actor = { type: "staff", email: admin.email } as const;
    n += 1;
    const bkey = `rp-b${n}`;
    await createBudget(t.db, {
      spec: { key: bkey, name: bkey, scope: "global", window: "utc_day", value: 1_000_000, min: 0, max: 3_000_000, default: 1_000_000, members: [key] },
      actor,
      reason: "budget",
    });
    const a = await staffMember(t.db, "operator");
    const b = await staffMember(t.db, "admin");
    const r1 = await requestChange(t.db, { kind: "budget.value", change: { budgetKey: bkey, value: 9_000_000 }, requester: a, reason: "more" });
    expect(r1.after).toEqual({ value: 3_000_000 });
    const r2 = await requestChange(t.db, { kind: "budget.bounds", change: { budgetKey: bkey, min: 0, max: 50_000_000 }, requester: a, reason: "room" });
    await approveChange(t.db, { id: r2.id, approver: b });
    const res = await approveChange(t.db, { id: r1.id, approver: b });
    expect(res.applied).toBe(false);
    const after = await t.db.select().from(budgets).where(eq(budgets.key, bkey));
    expect(one(after).value).toBe(1_000_000);
  });

  it("a raise of a KILLED ceiling may not carry an end (it would end in a kill remembering the raised value)", async () => {
    const { key, ceiling, admin } = await endpoint({ value: 100 });
    await killEndpoint(t.db, { endpointKey: key, actor: { type: "staff", email: admin.email }, reason: "incident" });
    const asker = await staffMember(t.db, "operator");
    await expect(
      requestChange(t.db, {
        kind: "ceiling.value",
        change: { ceilingId: ceiling.id, value: 150 },
        requester: asker,
        reason: "for one hour",
        endsAfterSeconds: 3600,
      }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("restore it first, then ask for a raise that ends"),
    });
    // Without an end it is an ordinary raise against the value before the kill.
    const r = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: ceiling.id, value: 150 }, requester: asker, reason: "for good" });
    expect(r.state).toBe("pending");
  });

  it("a raise of a KILLED budget may not carry an end", async () => {
    const { key } = await endpoint({ value: 100 });
    const admin = await staffMember(t.db, "admin");
    n += 1;
    const bkey = `rp-b${n}`;
    await createBudget(t.db, {
      spec: { key: bkey, name: bkey, scope: "global", window: "utc_day", value: 0, min: 0, max: 3_000_000, default: 1_000_000, members: [key] },
      actor: { type: "staff", email: admin.email },
      reason: "budget",
    });
    await t.ownerDb.update(budgets).set({ valueBeforeKill: 1_000_000 }).where(eq(budgets.key, bkey));
    const asker = await staffMember(t.db, "operator");
    await expect(
      requestChange(t.db, {
        kind: "budget.value",
        change: { budgetKey: bkey, value: 2_000_000 },
        requester: asker,
        reason: "for one hour",
        endsAfterSeconds: 3600,
      }),
    ).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("restore it first"),
    });
  });

  it("a min raise pulling up the DEFAULT of a ceiling at 0 with nothing remembered is a raise (a restore puts the default back)", async () => {
    const { key, ceiling, admin } = await endpoint({ value: 0, default: 100, max: 100_000 });
    const actor = { type: "staff", email: admin.email } as const;
    await expect(
      setBounds(t.db, { ceilingId: ceiling.id, min: "50000", max: "100000", expectedVersion: ceiling.version, actor, reason: "tidy bounds" }),
    ).rejects.toMatchObject({ code: "approval_required" });
    await restoreEndpoint(t.db, { endpointKey: key, actor, reason: "restore" });
    expect((await valueOf(ceiling.id)).value).toBe(100);
    // Asked for, it shows the default in its before, and is a raise.
    const asker = await staffMember(t.db, "operator");
    const fresh = await endpoint({ value: 0, default: 100, max: 100_000 });
    const r = await requestChange(t.db, {
      kind: "ceiling.bounds",
      change: { ceilingId: fresh.ceiling.id, min: 50_000, max: 100_000 },
      requester: asker,
      reason: "tidy",
    });
    expect(r.before).toMatchObject({ default: 100 });
  });

  it("a budget's default edited upward (updateBudget) on a budget at 0 needs approval", async () => {
    const { key } = await endpoint({ value: 100 });
    const actor = { type: "staff", email: "admin@raise-paths.local" } as const;
    n += 1;
    const bkey = `rp-b${n}`;
    await createBudget(t.db, {
      spec: { key: bkey, name: bkey, scope: "global", window: "utc_day", value: 0, min: 0, max: 1_000_000_000, default: 1_000_000, members: [key] },
      actor,
      reason: "budget at 0",
    });
    const b = await t.db.select().from(budgets).where(eq(budgets.key, bkey));
    await expect(
      updateBudget(t.db, {
        key: bkey,
        expectedVersion: one(b).version,
        fields: { name: bkey, members: [key], min: 0, max: 1_000_000_000, default: 900_000_000 },
        actor,
        reason: "default",
      }),
    ).rejects.toMatchObject({ code: "approval_required" });
    await restoreBudget(t.db, { key: bkey, actor, reason: "restore" });
    const after = await t.db.select().from(budgets).where(eq(budgets.key, bkey));
    expect(one(after).value).toBe(1_000_000);
    // Lowering the default stays one person's.
    await updateBudget(t.db, {
      key: bkey,
      expectedVersion: one(after).version,
      fields: { name: bkey, members: [key], min: 0, max: 1_000_000_000, default: 500_000 },
      actor,
      reason: "lower default",
    });
  });

  it("a catalog file raising the default of a ceiling at 0 with nothing remembered is refused (no request kind for a default)", async () => {
    const { key, ceiling, admin } = await endpoint({ value: 0, default: 100, max: 100_000 });
    const file = await exportCatalog(t.db);
    const e = one(file.endpoints.filter((x) => x.key === key));
    e.ceilings = e.ceilings.map((c) => ({ ...c, default: 100_000 }));
    await expect(
      applyCatalog(t.db, {
        text: JSON.stringify(file),
        actor: { type: "config", name: admin.email },
        reason: "tidy defaults",
        confirmRaise: true,
        onRaises: async () => [],
      }),
    ).rejects.toThrow(/default 100 → 100,000/);
    await restoreEndpoint(t.db, { endpointKey: key, actor: { type: "staff", email: admin.email }, reason: "restore" });
    expect((await valueOf(ceiling.id)).value).toBe(100);
  });

  it("an admin account the requester created, or made an admin, may not approve, reject or acknowledge their request (audited)", async () => {
    const { ceiling } = await endpoint({ value: 100 });
    const a = await staffMember(t.db, "admin");
    const r = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: ceiling.id, value: 400 }, requester: a, reason: "need more" });
    const { staff } = await addStaff(t.db, {
      email: `alt-${Date.now()}@raise-paths.local`,
      role: "admin",
      password: "correct horse battery",
      actor: { type: "staff", email: a.email },
      bcryptCost: 4,
    });
    const puppet = { staffId: staff.id, email: staff.email, role: "admin" as const, via: "dashboard" as const };
    await expect(approveChange(t.db, { id: r.id, approver: puppet })).rejects.toMatchObject({
      code: "own_request",
      message: expect.stringContaining(`created by ${a.email}`),
    });
    await expect(rejectChange(t.db, { id: r.id, approver: puppet, note: "no" })).rejects.toMatchObject({ code: "own_request" });
    const refused = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "change.refused"), eq(auditEvents.actor, puppet.email)));
    expect(refused.map((e) => (e.details as { code?: string }).code)).toEqual(["own_request", "own_request"]);
    expect((await valueOf(ceiling.id)).value).toBe(100);

    // Promoted by the requester (an operator someone else added): the same.
    const op = await staffMember(t.db, "operator");
    await changeStaffRole(t.db, { email: op.email, role: "admin", actor: { type: "staff", email: a.email } });
    await expect(approveChange(t.db, { id: r.id, approver: { ...op, role: "admin" } })).rejects.toMatchObject({
      code: "own_request",
      message: expect.stringContaining(`was promoted by ${a.email}`),
    });

    // A break glass is acknowledged by an admin the breaker did not make.
    const bg = await breakGlass(t.db, {
      kind: "ceiling.value",
      change: { ceilingId: ceiling.id, value: 200 },
      requester: a,
      reason: "incident: need headroom now",
    });
    await expect(acknowledgeBreakGlass(t.db, { id: bg.id, admin: puppet })).rejects.toMatchObject({ code: "own_request" });
    const other = await staffMember(t.db, "admin");
    expect((await acknowledgeBreakGlass(t.db, { id: bg.id, admin: other })).acknowledgedBy).toBe(other.email);
  });

  it("a new endpoint with a ceiling above its default is refused (create it at its defaults, then ask); at its defaults it is created", async () => {
    n += 1;
    const admin = await staffMember(t.db, "admin");
    const spec = (value: number) => ({
      key: `rp.new${n}`,
      name: "new",
      unit: "units",
      parts: [{ name: "units", price: "0.000001" }],
      perCallMax: 10,
      ceilings: [{ metric: "units", scope: "global", window: "utc_day", value, min: 0, max: 1_000_000, default: 10 }],
    });
    await expect(createEndpoint(t.db, { spec: spec(1_000_000), actor: { type: "staff", email: admin.email }, reason: "new" })).rejects.toMatchObject({
      code: "approval_required",
      message: expect.stringContaining("create the endpoint with each ceiling at its default, then ask for the raise"),
    });
    expect(
      await t.db
        .select()
        .from(endpoints)
        .where(eq(endpoints.key, `rp.new${n}`)),
    ).toEqual([]);
    await createEndpoint(t.db, { spec: spec(10), actor: { type: "staff", email: admin.email }, reason: "new" });
  });

  it("a ceiling removed and added back looser within 24 hours is a raise (its default above what the removed one stood at)", async () => {
    const { key, ceiling, admin } = await endpoint({ value: 100, max: 1000 });
    const actor = { type: "staff", email: admin.email } as const;
    const version = async () => one(await t.db.select().from(endpoints).where(eq(endpoints.key, key))).version;
    // A second global ceiling first, so the daily one is not "the last global ceiling".
    await addCeiling(t.db, {
      key,
      expectedVersion: await version(),
      ceiling: { metric: "units", scope: "global", window: "billing_month", value: 50_000_000, min: 0, max: 50_000_000, default: 50_000_000 },
      actor,
      reason: "month cap",
    });
    await removeCeiling(t.db, { key, ceilingId: ceiling.id, expectedVersion: await version(), actor, reason: "redo" });
    const looser = { metric: "units", scope: "global", window: "utc_day", value: 1_000_000, min: 0, max: 1_000_000, default: 1_000_000 } as const;
    await expect(addCeiling(t.db, { key, expectedVersion: await version(), ceiling: looser, actor, reason: "redo" })).rejects.toMatchObject({
      code: "approval_required",
      message: expect.stringContaining("removed in the last 24 hours stood at 100"),
    });
    const day = async () => (await t.db.select().from(ceilings).where(eq(ceilings.endpointId, ceiling.endpointId))).find((r) => r.window === "utc_day");
    expect(await day()).toBeUndefined();
    // Asked for, it is a raise; a second admin approves it.
    const asker = await staffMember(t.db, "operator");
    const r = await requestChange(t.db, {
      kind: "ceiling.add",
      change: { endpointKey: key, ceiling: looser },
      requester: asker,
      reason: "redo",
      confirm: "1000000",
    });
    expect(r.state).toBe("pending");
    // Added back at what it was (or lower): one person's.
    await addCeiling(t.db, { key, expectedVersion: await version(), ceiling: { ...looser, value: 100, default: 100 }, actor, reason: "redo as it was" });
    expect((await day())?.value).toBe(100);
  });
});
