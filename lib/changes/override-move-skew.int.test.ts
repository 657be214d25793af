import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { accounts, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { assignPlans } from "@/lib/accounts";
import { removeBudgetOverride, setBudgetOverride } from "@/lib/budgets/overrides";
import { removeOverride, setOverride } from "@/lib/ceilings/overrides";
import { createPlan, setPlanValue } from "@/lib/plans";
import { budgetOn, perCallerEndpoint, planKey } from "@/lib/plans/test-fixtures";
import { ChangeControlError, setupControl } from "./index";
import { listOverrides } from "@/lib/limits/overrides";

// Write skew between an override and a plan move. Account X on free (10) with an override of 10;
// pro gives 1,000. Moving X to pro is no raise (its override binds it); removing the override is
// no raise (free gives 10). Each alone is one person's; both together leave X on pro with no
// override: 1,000, which neither person could do alone. The override writers lock the account's
// row as the move does, so the second of the two reads what the first wrote and is refused.

const control = setupControl("override move skew test");
const setup = { type: "system", name: "override move skew test" } as const;
const ROUNDS = 20;
let n = 0;

/** Which of the two settled: exactly one, the other refused as a raise (approval_required). */
async function settled(work: Promise<unknown>[]): Promise<number> {
  const outcomes = await Promise.allSettled(work);
  for (const o of outcomes) {
    if (o.status === "rejected" && !(o.reason instanceof ChangeControlError && o.reason.code === "approval_required")) throw o.reason;
  }
  return outcomes.filter((o) => o.status === "fulfilled").length;
}

describe.skipIf(skipWithoutDatabase())("an override removal and a plan move of one account cannot both loosen it", () => {
  const t = useTestDatabase("override_move_skew", { max: 12 });

  const planOf = async (account: string) => {
    const [row] = await t.db.select({ key: plans.key }).from(accounts).innerJoin(plans, eq(plans.id, accounts.planId)).where(eq(accounts.account, account));
    return row?.key ?? null;
  };

  it(`per-caller ceiling: removing the override and moving to the looser plan in parallel, ${ROUNDS} rounds: exactly one applies, never pro without an override`, async () => {
    const e = await perCallerEndpoint(t.db);
    const free = (await createPlan(t.db, { key: planKey("free"), name: "Free", actor: setup, reason: "setup" })).key;
    const pro = (await createPlan(t.db, { key: planKey("pro"), name: "Pro", actor: setup, reason: "setup" })).key;
    await setPlanValue(t.db, { planKey: free, target: { ceilingId: e.caller.id }, input: "10", actor: setup, reason: "setup" });
    await setPlanValue(t.db, {
      planKey: pro,
      target: { ceilingId: e.caller.id },
      input: "1000",
      confirm: "1000",
      actor: setup,
      reason: "setup",
      changeControl: control,
    });
    for (let round = 0; round < ROUNDS; round++) {
      const account = `acct_skew_c${++n}_${Date.now().toString(36)}`;
      await assignPlans(t.db, { rows: [{ account, plan: free }], actor: setup });
      await setOverride(t.db, { ceilingId: e.caller.id, caller: account, input: "10", actor: setup, reason: "setup" });
      const applied = await settled([
        removeOverride(t.db, { ceilingId: e.caller.id, caller: account, actor: setup, reason: "back to plan" }),
        assignPlans(t.db, { rows: [{ account, plan: pro }], actor: setup }),
      ]);
      const override = (await listOverrides(t.db, "ceiling", [e.caller.id])).find((o) => o.caller === account);
      const on = await planOf(account);
      expect({ round, applied, loose: on === pro && !override }).toEqual({ round, applied: 1, loose: false });
    }
  });

  it(`per-account budget: the same, ${ROUNDS} rounds`, async () => {
    const budget = await budgetOn(t.db);
    const free = (await createPlan(t.db, { key: planKey("free"), name: "Free", actor: setup, reason: "setup" })).key;
    const pro = (await createPlan(t.db, { key: planKey("pro"), name: "Pro", actor: setup, reason: "setup" })).key;
    await setPlanValue(t.db, { planKey: free, target: { budgetKey: budget.key }, input: "1.50", actor: setup, reason: "setup" });
    await setPlanValue(t.db, {
      planKey: pro,
      target: { budgetKey: budget.key },
      input: "9",
      confirm: "9",
      actor: setup,
      reason: "setup",
      changeControl: control,
    });
    for (let round = 0; round < ROUNDS; round++) {
      const account = `acct_skew_b${++n}_${Date.now().toString(36)}`;
      await assignPlans(t.db, { rows: [{ account, plan: free }], actor: setup });
      await setBudgetOverride(t.db, { key: budget.key, caller: account, input: "1.50", actor: setup, reason: "setup" });
      const applied = await settled([
        removeBudgetOverride(t.db, { key: budget.key, caller: account, actor: setup, reason: "back to plan" }),
        assignPlans(t.db, { rows: [{ account, plan: pro }], actor: setup }),
      ]);
      const override = (await listOverrides(t.db, "budget", [budget.id])).find((o) => o.caller === account);
      const on = await planOf(account);
      expect({ round, applied, loose: on === pro && !override }).toEqual({ round, applied: 1, loose: false });
    }
  });
});
