import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { accounts, budgetOverrides, budgets, ceilingOverrides, ceilings, endpoints, planBudgetValues, planCeilingValues, plans } from "@/db/schema";

// One account as the API and the CLI show it: its plan, whether it is blocked, and the value that
// binds it on each per-caller ceiling and per-account budget, with where that value comes from.
// Precedence as enforcement applies it: a killed ceiling or budget (0) binds everyone; else the
// account's override, else its plan's value, else the ceiling's (or budget's) own. Two keyed reads
// of a few rows each: no counters, which the dashboard's account page reads (lib/accounts/read).

export type BindingSource = "killed" | "override" | "plan" | "ceiling" | "budget";

export type CeilingBinding = { ceilingId: number; endpoint: string; metric: string; window: string; value: number; source: BindingSource };
export type BudgetBinding = { budget: string; currency: string; window: string; value: number; source: BindingSource };

export type AccountView = {
  account: string;
  /** Whether any reservation or assignment has named the account (false: it would be on the default plan). */
  known: boolean;
  plan: { key: string; name: string };
  /** False when the account follows the default plan, whichever that is. */
  planAssigned: boolean;
  planSetAt: Date | null;
  planSetBy: string | null;
  blocked: { at: Date; by: string | null; reason: string | null } | null;
  firstSeenAt: Date | null;
  ceilings: CeilingBinding[];
  budgets: BudgetBinding[];
};

function bind(own: number, override: number | null, plan: number | null, fallback: "ceiling" | "budget"): { value: number; source: BindingSource } {
  if (own === 0) return { value: 0, source: "killed" };
  if (override !== null) return { value: override, source: "override" };
  if (plan !== null) return { value: plan, source: "plan" };
  return { value: own, source: fallback };
}

/** The account as it binds now; an account never seen reads as the default plan's, unblocked. */
export async function getAccount(db: Db, account: string): Promise<AccountView> {
  const [row] = await db.select().from(accounts).where(eq(accounts.account, account));
  const [plan] = row?.planId
    ? await db.select({ id: plans.id, key: plans.key, name: plans.name }).from(plans).where(eq(plans.id, row.planId))
    : await db.select({ id: plans.id, key: plans.key, name: plans.name }).from(plans).where(eq(plans.isDefault, true));
  if (!plan) throw new Error("no default plan: the plans table has no row with is_default");

  const ceilingRows = await db
    .select({
      ceilingId: ceilings.id,
      endpoint: endpoints.key,
      metric: ceilings.metric,
      window: ceilings.window,
      own: ceilings.value,
      override: ceilingOverrides.value,
      plan: planCeilingValues.value,
    })
    .from(ceilings)
    .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
    .leftJoin(ceilingOverrides, and(eq(ceilingOverrides.ceilingId, ceilings.id), eq(ceilingOverrides.caller, account)))
    .leftJoin(planCeilingValues, and(eq(planCeilingValues.ceilingId, ceilings.id), eq(planCeilingValues.planId, plan.id)))
    .where(and(eq(ceilings.scope, "caller"), isNull(endpoints.archivedAt)))
    .orderBy(asc(endpoints.key), asc(ceilings.id));

  const budgetRows = await db
    .select({ key: budgets.key, currency: budgets.currency, window: budgets.window, own: budgets.value, override: budgetOverrides.value, plan: planBudgetValues.value })
    .from(budgets)
    .leftJoin(budgetOverrides, and(eq(budgetOverrides.budgetId, budgets.id), eq(budgetOverrides.caller, account)))
    .leftJoin(planBudgetValues, and(eq(planBudgetValues.budgetId, budgets.id), eq(planBudgetValues.planId, plan.id)))
    .where(and(eq(budgets.scope, "account"), isNull(budgets.archivedAt)))
    .orderBy(sql`${budgets.key}`);

  return {
    account,
    known: row !== undefined,
    plan: { key: plan.key, name: plan.name },
    planAssigned: row?.planId != null,
    planSetAt: row?.planSetAt ?? null,
    planSetBy: row?.planSetBy ?? null,
    blocked: row?.blockedAt ? { at: row.blockedAt, by: row.blockedBy, reason: row.blockReason } : null,
    firstSeenAt: row?.firstSeenAt ?? null,
    ceilings: ceilingRows.map((c) => ({ ceilingId: c.ceilingId, endpoint: c.endpoint, metric: c.metric, window: c.window, ...bind(c.own, c.override, c.plan, "ceiling") })),
    budgets: budgetRows.map((b) => ({ budget: b.key, currency: b.currency, window: b.window, ...bind(b.own, b.override, b.plan, "budget") })),
  };
}
