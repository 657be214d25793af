import { desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/define-action";
import { form } from "@/app/_lib/test-form";
import { accounts, auditEvents, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { Role } from "@/lib/auth/roles";
import { setupControl } from "@/lib/changes";
import { createPlan, readPlan, setPlanValue } from "@/lib/plans";
import { budgetOn, perCallerEndpoint, planKey, planSnapshot } from "@/lib/plans/test-fixtures";
import { createPlanCore, deletePlanCore, removePlanValueCore, setDefaultPlanCore, setPlanValueCore, updatePlanCore } from "./plan-action-core";

// The plans' server actions are public POST endpoints: each checks the role itself. Plans, their
// values and the default are an admin's (a plan value moves what thousands of accounts may spend);
// viewers and operators are refused and nothing changes. A typo is an error next to its field.

type Core = (deps: ActionDeps, formData: FormData) => Promise<ActionState>;
const setup = { type: "system", name: "test" } as const;
// The fixture's plan is built on purpose above the own values (setup, not a person's raise).
const control = setupControl("test");

describe.skipIf(skipWithoutDatabase())("plan server actions", () => {
  const t = useTestDatabase("plan_actions");

  const deps = (role: Role | null): ActionDeps => ({
    session: async () => (role ? { id: 1, email: `${role}@example.com`, role } : null),
    db: async () => t.db,
    revalidate: () => {},
  });

  /** A plan with a value on a per-caller ceiling and a per-account budget, to act on. */
  async function existing() {
    const plan = await createPlan(t.db, { key: planKey(), name: "Pro", actor: setup, reason: "setup" });
    const e = await perCallerEndpoint(t.db);
    const b = await budgetOn(t.db);
    await setPlanValue(t.db, { planKey: plan.key, target: { ceilingId: e.caller.id }, input: "20", actor: setup, reason: "setup", changeControl: control });
    await setPlanValue(t.db, { planKey: plan.key, target: { budgetKey: b.key }, input: "3", actor: setup, reason: "setup", changeControl: control });
    const { plan: now } = await readPlan(t.db, plan.key);
    return { key: plan.key, version: now.version, ceilingId: e.caller.id, budget: b.key };
  }

  type Existing = Awaited<ReturnType<typeof existing>>;
  const cases: { name: string; core: Core; form: (e: Existing) => FormData }[] = [
    { name: "create", core: createPlanCore, form: () => form({ key: planKey("new"), name: "Free", description: "", reason: "r" }) },
    {
      name: "update",
      core: updatePlanCore,
      form: (e) => form({ key: e.key, expectedVersion: String(e.version), name: "Pro 2", description: "paid", reason: "r" }),
    },
    // Lowering: one admin's (a raise is asked: lib/changes/plan-paths.int.test.ts).
    { name: "set a ceiling value", core: setPlanValueCore, form: (e) => form({ key: e.key, ceilingId: String(e.ceilingId), input: "15", reason: "r" }) },
    { name: "set a budget value", core: setPlanValueCore, form: (e) => form({ key: e.key, budget: e.budget, input: "2.50", reason: "r" }) },
    { name: "remove a ceiling value", core: removePlanValueCore, form: (e) => form({ key: e.key, ceilingId: String(e.ceilingId), reason: "r" }) },
    { name: "remove a budget value", core: removePlanValueCore, form: (e) => form({ key: e.key, budget: e.budget, reason: "r" }) },
    { name: "make default", core: setDefaultPlanCore, form: (e) => form({ key: e.key, reason: "r" }) },
    { name: "delete", core: deletePlanCore, form: (e) => form({ key: e.key, reason: "r" }) },
  ];

  for (const c of cases) {
    for (const role of [null, "viewer", "operator"] as const) {
      it(`${c.name} as ${role ?? "no session"} is refused and changes nothing`, async () => {
        const e = await existing();
        const before = await planSnapshot(t.db);
        const audit = await t.db.select().from(auditEvents);
        const state = await c.core(deps(role), c.form(e));
        expect(state).toEqual({ status: "error", error: role === null ? "Sign in required" : `Your role (${role}) cannot do this` });
        expect(await planSnapshot(t.db)).toEqual(before);
        expect(await t.db.select().from(auditEvents)).toEqual(audit);
      });
    }
    it(`${c.name} as admin goes through`, async () => {
      const e = await existing();
      const state = await c.core(deps("admin"), c.form(e));
      // This plan (20 on the ceiling, above its own 10) is looser than the default: making it the default is a raise.
      if (c.core === setDefaultPlanCore) {
        expect(state).toMatchObject({ status: "error", code: "approval_required" });
        return;
      }
      expect(state.status, JSON.stringify(state)).toBe("ok");
      // Put the seeded default back, so the next case finds it where it was.
      if (c.core === setDefaultPlanCore) await setDefaultPlanCore(deps("admin"), form({ key: "default", reason: "back" }));
    });
  }

  it("create names a bad key and an empty name next to their fields, audits the attempt, saves nothing, and redirects on success", async () => {
    const before = await t.db.select().from(plans);
    const bad = await createPlanCore(deps("admin"), form({ key: "Pro Plan", name: " ", reason: "r" }));
    expect(bad).toMatchObject({
      status: "error",
      code: "invalid_input",
      fieldErrors: { key: expect.stringContaining("key must look like pro"), name: "name is required" },
    });
    expect(await t.db.select().from(plans)).toEqual(before);
    const [rejected] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "plan.rejected")).orderBy(desc(auditEvents.id)).limit(1);
    expect(rejected?.rawInput).toContain("Pro Plan");
    const key = planKey("ok");
    expect(await createPlanCore(deps("admin"), form({ key, name: "OK", reason: "r" }))).toMatchObject({ status: "ok", redirectTo: `/plans/${key}` });
  });

  it.each(["1e9", "500abc", "-5", ""])("set refuses %j next to the field; nothing saved, the attempt audited", async (input) => {
    const e = await existing();
    const before = await planSnapshot(t.db);
    const state = await setPlanValueCore(deps("admin"), form({ key: e.key, ceilingId: String(e.ceilingId), input, reason: "typo" }));
    expect(state).toMatchObject({ status: "error", code: "invalid_input", fieldErrors: { input: expect.any(String) } });
    expect(await planSnapshot(t.db)).toEqual(before);
    const [rejected] = await t.db.select().from(auditEvents).where(eq(auditEvents.action, "plan.rejected")).orderBy(desc(auditEvents.id)).limit(1);
    expect(rejected).toMatchObject({ target: e.key, rawInput: input });
  });

  it("set asks to retype a 5x raise, then answers it approval_required; refuses a global ceiling or no target", async () => {
    const e = await existing();
    // Above what binds: a raise, asked of a second admin (lib/changes/plan-paths.int.test.ts), typed twice first when 5x.
    expect(await setPlanValueCore(deps("admin"), form({ key: e.key, ceilingId: String(e.ceilingId), input: "5000", reason: "r" }))).toMatchObject({
      status: "error",
      code: "confirmation_required",
    });
    expect(
      await setPlanValueCore(deps("admin"), form({ key: e.key, ceilingId: String(e.ceilingId), input: "5000", confirm: "5000", reason: "r" })),
    ).toMatchObject({ status: "error", code: "approval_required" });
    const global = (await perCallerEndpoint(t.db)).global;
    expect(await setPlanValueCore(deps("admin"), form({ key: e.key, ceilingId: String(global.id), input: "10", reason: "r" }))).toMatchObject({
      status: "error",
      code: "not_per_caller",
    });
    expect(await setPlanValueCore(deps("admin"), form({ key: e.key, input: "10", reason: "r" }))).toMatchObject({ status: "error", code: "invalid_input" });
    expect(await setPlanValueCore(deps("admin"), form({ key: "nope", ceilingId: String(e.ceilingId), input: "10", reason: "r" }))).toMatchObject({
      status: "error",
      code: "not_found",
    });
  });

  it("delete is refused while accounts are on the plan, and for the default", async () => {
    const e = await existing();
    expect(await deletePlanCore(deps("admin"), form({ key: "default", reason: "r" }))).toMatchObject({ status: "error", code: "in_use" });
    const [row] = await t.db.select().from(plans).where(eq(plans.key, e.key));
    await t.db.insert(accounts).values({ account: `acct-${e.key}`, planId: row?.id ?? 0 });
    expect(await deletePlanCore(deps("admin"), form({ key: e.key, reason: "r" }))).toMatchObject({ status: "error", code: "in_use" });
  });
});
