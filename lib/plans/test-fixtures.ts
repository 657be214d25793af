import { asc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { accounts, auditEvents, planLimitValues, plans } from "@/db/schema";
import { createBudget } from "@/lib/budgets";
import { createEndpoint } from "@/lib/ceilings/test-fixtures";

// Small, explicit fixtures for the plans' integration tests: each test makes its own endpoint,
// budget and plan, so no two share rows.

export const DOLLAR = 1_000_000;
const setup = { type: "system", name: "test fixture" } as const;
let n = 0;

/** An endpoint with a per-caller ceiling (10 a day, bounds 1..1000) and a global one (1000 a day). */
export async function perCallerEndpoint(db: Db) {
  const e = await createEndpoint(db, {
    ceilings: [
      { metric: "units", scope: "caller", window: "utc_day", value: 10, defaultValue: 10, minValue: 1, maxValue: 1000 },
      { metric: "units", scope: "global", window: "utc_day", value: 1000, defaultValue: 1000, minValue: 0, maxValue: 5000 },
    ],
  });
  const caller = e.ceilings.find((c) => c.scope === "caller");
  const global = e.ceilings.find((c) => c.scope === "global");
  if (!caller || !global) throw new Error("fixture endpoint without its two ceilings");
  return { key: e.key, endpointId: e.endpointId, caller, global };
}

/** A budget over a new endpoint: per account ($2 a day, bounds $1..$10) unless `scope` says global. */
export async function budgetOn(db: Db, scope: "account" | "global" = "account") {
  n += 1;
  const e = await perCallerEndpoint(db);
  return createBudget(db, {
    spec: {
      key: `llm.plan-b${n}-${Date.now().toString(36)}`,
      name: "LLM",
      scope,
      window: "utc_day",
      value: 2 * DOLLAR,
      min: DOLLAR,
      max: 10 * DOLLAR,
      default: 2 * DOLLAR,
      members: [e.key],
    },
    actor: setup,
    reason: "setup",
  });
}

export function planKey(prefix = "p"): string {
  n += 1;
  return `${prefix}${n}-${Date.now().toString(36)}`;
}

/** Every row a plan verb may touch, to show a refused call changed nothing. */
export async function planSnapshot(db: Db) {
  return {
    plans: await db.select().from(plans).orderBy(asc(plans.id)),
    values: await db.select().from(planLimitValues).orderBy(asc(planLimitValues.planId), asc(planLimitValues.limitId)),
    accounts: await db.select().from(accounts).orderBy(asc(accounts.account)),
  };
}

export async function planAudit(db: Db, key: string) {
  return db.select().from(auditEvents).where(eq(auditEvents.target, key)).orderBy(asc(auditEvents.id));
}
