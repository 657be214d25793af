import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditEvents, budgets, ceilings, endpoints } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { addStaff } from "@/lib/auth/staff-admin";
import { createBudget, restoreBudget, updateBudget } from "@/lib/budgets/change";
import { applyCatalog, exportCatalog } from "@/lib/catalog/file";
import { addCeiling, createEndpoint, removeCeiling } from "@/lib/catalog/change";
import { setBounds } from "@/lib/ceilings/bounds";
import { killEndpoint, restoreEndpoint } from "@/lib/ceilings/kill";
import { approveChange, requestChange } from "./index";
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
        ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: c.value, min: c.min ?? 0, max: c.max ?? 100_000, default: c.default ?? c.value }],
      },
      actor: { type: "staff", email: admin.email },
      reason: "fixture",
    });
    const [ceiling] = await t.db.select().from(ceilings).where(eq(ceilings.endpointId, e.id));
    if (!ceiling) throw new Error("no ceiling");
    return { key, endpointId: e.id, ceiling, admin };
  }
  const valueOf = async (id: number) => (await t.db.select().from(ceilings).where(eq(ceilings.id, id)))[0]!;

  it("an approval applies the value the request showed; a max moved since makes it stale, never the typed value", async () => {
    const { ceiling } = await endpoint({ value: 100, max: 300 });
    const a = await staffMember(t.db, "operator");
    const b = await staffMember(t.db, "admin");
    const r1 = await requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: ceiling.id, value: 1000 }, requester: a, reason: "a bit more" });
    expect(r1.after).toEqual({ value: 300 });
    const r2 = await requestChange(t.db, { kind: "ceiling.bounds", change: { ceilingId: ceiling.id, min: 0, max: 5000 }, requester: a, reason: "room for later" });
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
    await createBudget(t.db, { spec: { key: bkey, name: bkey, scope: "global", window: "utc_day", value: 1_000_000, min: 0, max: 3_000_000, default: 1_000_000, members: [key] }, actor, reason: "budget" });
    const a = await staffMember(t.db, "operator");
    const b = await staffMember(t.db, "admin");
    const r1 = await requestChange(t.db, { kind: "budget.value", change: { budgetKey: bkey, value: 9_000_000 }, requester: a, reason: "more" });
    expect(r1.after).toEqual({ value: 3_000_000 });
    const r2 = await requestChange(t.db, { kind: "budget.bounds", change: { budgetKey: bkey, min: 0, max: 50_000_000 }, requester: a, reason: "room" });
    await approveChange(t.db, { id: r2.id, approver: b });
    const res = await approveChange(t.db, { id: r1.id, approver: b });
    expect(res.applied).toBe(false);
    const [after] = await t.db.select().from(budgets).where(eq(budgets.key, bkey));
    expect(after!.value).toBe(1_000_000);
  });

  it("a raise of a KILLED ceiling may not carry an end (it would end in a kill remembering the raised value)", async () => {
    const { key, ceiling, admin } = await endpoint({ value: 100 });
    await killEndpoint(t.db, { endpointKey: key, actor: { type: "staff", email: admin.email }, reason: "incident" });
    const asker = await staffMember(t.db, "operator");
    await expect(requestChange(t.db, { kind: "ceiling.value", change: { ceilingId: ceiling.id, value: 150 }, requester: asker, reason: "for one hour", endsAfterSeconds: 3600 })).rejects.toMatchObject({
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
    await createBudget(t.db, { spec: { key: bkey, name: bkey, scope: "global", window: "utc_day", value: 0, min: 0, max: 3_000_000, default: 1_000_000, members: [key] }, actor: { type: "staff", email: admin.email }, reason: "budget" });
    await t.ownerDb.update(budgets).set({ valueBeforeKill: 1_000_000 }).where(eq(budgets.key, bkey));
    const asker = await staffMember(t.db, "operator");
    await expect(requestChange(t.db, { kind: "budget.value", change: { budgetKey: bkey, value: 2_000_000 }, requester: asker, reason: "for one hour", endsAfterSeconds: 3600 })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringContaining("restore it first"),
    });
  });
});
