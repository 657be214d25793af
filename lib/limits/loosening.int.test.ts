import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { accounts, ceilings, endpoints, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { budgetOn, DOLLAR, perCallerEndpoint, planKey } from "@/lib/plans/test-fixtures";
import { insertOverride, insertPlanValue } from "@/lib/limits/test-fixtures";

// ceilings.plan_loosening (and ceilings.plan_limit, its one-account, one-limit sibling) called as SQL, the one reading of "looser" every plan move and default
// switch goes by: a limit is returned only when its binding value goes up, the account's override
// first, else the plan's value, else the limit's own standing value (its value before a kill), in
// the limit's measure (a ceiling of calls counts calls times the per-call max; a budget micros).

type Row = { limit_kind: string; limit_id: number; measure: string; before_value: string; after_value: string; worst_before: string; worst_after: string };

describe.skipIf(skipWithoutDatabase())("ceilings.plan_loosening", () => {
  const t = useTestDatabase("plan_loosening");

  const loosening = async (from: number | null, to: number | null, account: string | null = null) =>
    resultRows<Row>(await t.db.execute(sql`select * from ceilings.plan_loosening(${from}::int, ${to}::int, ${account}::text)`)).map((r) => ({
      kind: r.limit_kind,
      id: Number(r.limit_id),
      measure: r.measure,
      before: Number(r.before_value),
      after: Number(r.after_value),
      worstBefore: Number(r.worst_before),
      worstAfter: Number(r.worst_after),
    }));
  async function plan(): Promise<number> {
    const key = planKey("lo");
    const [row] = await t.db.insert(plans).values({ key, name: key }).returning({ id: plans.id });
    if (!row) throw new Error("no plan");
    return row.id;
  }

  it("returns each limit whose binding value goes up, and only those, in the limit's measure", async () => {
    const e = await perCallerEndpoint(t.db);
    const b = await budgetOn(t.db);
    const a = await plan();
    const p = await plan();
    await insertPlanValue(t.db, "ceiling", e.caller.id, { planId: a, value: 20 });
    await insertPlanValue(t.db, "ceiling", e.caller.id, { planId: p, value: 50 });
    await insertPlanValue(t.db, "budget", b.id, { planId: p, value: DOLLAR });
    // a → p: the ceiling 20 → 50 loosens; the budget (own $2 → p's $1) tightens: not returned.
    expect(await loosening(a, p)).toEqual([{ kind: "ceiling", id: e.caller.id, measure: "units", before: 20, after: 50, worstBefore: 20, worstAfter: 50 }]);
    // p → a: the budget $1 → the own $2 loosens, in micros; the ceiling tightens.
    expect(await loosening(p, a)).toEqual([
      { kind: "budget", id: b.id, measure: "micros", before: DOLLAR, after: 2 * DOLLAR, worstBefore: DOLLAR, worstAfter: 2 * DOLLAR },
    ]);
    // The same plan both sides: nothing.
    expect(await loosening(p, p)).toEqual([]);
  });

  it("takes the account's override first: a move under an override loosens nothing there", async () => {
    const e = await perCallerEndpoint(t.db);
    const b = await budgetOn(t.db);
    const a = await plan();
    const p = await plan();
    await insertPlanValue(t.db, "ceiling", e.caller.id, { planId: p, value: 500 });
    await insertPlanValue(t.db, "budget", b.id, { planId: p, value: 9 * DOLLAR });
    await insertOverride(t.db, "ceiling", e.caller.id, { caller: "acct_pinned", value: 3, reason: "pinned" });
    await insertOverride(t.db, "budget", b.id, { caller: "acct_pinned", value: DOLLAR, reason: "pinned" });
    expect((await loosening(a, p)).map((r) => r.kind).sort()).toEqual(["budget", "ceiling"]);
    expect(await loosening(a, p, "acct_pinned")).toEqual([]);
    expect((await loosening(a, p, "acct_free")).length).toBe(2);
  });

  it("falls back to the default plan for NULL, and to the own standing value (before a kill) where a plan sets none", async () => {
    const e = await perCallerEndpoint(t.db);
    const p = await plan();
    await insertPlanValue(t.db, "ceiling", e.caller.id, { planId: p, value: 5 });
    // The default plan sets nothing on this ceiling: its own 10 binds; p's 5 is tighter, p → default looser.
    expect(await loosening(null, p)).toEqual([]);
    expect(await loosening(p, null)).toEqual([expect.objectContaining({ id: e.caller.id, before: 5, after: 10 })]);
    // Killed: 0 in force, 10 remembered; the own standing value is still 10, not 0.
    await t.db.update(ceilings).set({ value: 0, valueBeforeKill: 10 }).where(eq(ceilings.id, e.caller.id));
    expect(await loosening(p, null)).toEqual([expect.objectContaining({ id: e.caller.id, before: 5, after: 10 })]);
  });

  it("ceilings.plan_limit: what the account's plan gives it before its override (the default plan when unassigned, else the own standing value)", async () => {
    const e = await perCallerEndpoint(t.db);
    const p = await plan();
    await insertPlanValue(t.db, "ceiling", e.caller.id, { planId: p, value: 70 });
    await t.db.insert(accounts).values([{ account: "acct_limit_on_p", planId: p }]);
    await insertOverride(t.db, "ceiling", e.caller.id, { caller: "acct_limit_on_p", value: 3, reason: "pinned" });
    const limit = async (account: string, id = e.caller.id, kind = "ceiling") =>
      resultRows<{ v: string | null }>(await t.db.execute(sql`select ceilings.plan_limit(${kind}, ${id}::int, ${account}) as v`))[0]?.v ?? null;
    expect(await limit("acct_limit_on_p")).toBe("70");
    expect(await limit("acct_never_seen")).toBe("10");
    expect(await limit("acct_never_seen", e.global.id)).toBeNull();
  });

  it("counts a ceiling of calls as calls times the per-call max", async () => {
    const e = await perCallerEndpoint(t.db);
    await t.db.update(ceilings).set({ metric: "calls" }).where(eq(ceilings.id, e.caller.id));
    await t.db.update(endpoints).set({ perCallMax: 7 }).where(eq(endpoints.id, e.endpointId));
    const a = await plan();
    const p = await plan();
    await insertPlanValue(t.db, "ceiling", e.caller.id, { planId: a, value: 2 });
    await insertPlanValue(t.db, "ceiling", e.caller.id, { planId: p, value: 3 });
    expect(await loosening(a, p)).toEqual([{ kind: "ceiling", id: e.caller.id, measure: "units", before: 2, after: 3, worstBefore: 14, worstAfter: 21 }]);
  });
});
