import { and, asc, eq, isNull, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { accounts, budgets, ceilings, endpoints, plans } from "@/db/schema";

// One account as the API and the CLI show it: its plan, whether it is blocked, and the value that
// binds it on each per-caller ceiling and per-account budget, with where that value comes from.
// Precedence as enforcement applies it, from caller_limit and account_budget_limit: a killed ceiling
// or budget (0) binds everyone, a blocked account gets 0; else the account's override, else its
// plan's value, else the ceiling's (or budget's) own. No counters, which the dashboard's account
// page reads (lib/accounts/read).

/** Why a value binds (db/functions/caller_limit.sql and account_budget_limit.sql decide). */
export type BindingSource = "kill" | "blocked" | "override" | "plan" | "ceiling" | "budget";

/** overrideEndsAt: when the account's override ends by itself (source override); null when it lasts or another source binds. */
export type CeilingBinding = {
  ceilingId: number;
  endpoint: string;
  metric: string;
  window: string;
  value: number;
  source: BindingSource;
  overrideEndsAt: Date | null;
};
export type BudgetBinding = { budget: string; currency: string; window: string; value: number; source: BindingSource; overrideEndsAt: Date | null };

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

/**
 * The account as it binds now; an account never seen reads as the default plan's, unblocked.
 * `onlyEndpoints`: only the ceilings of these endpoints and the budgets with one of them as a member
 * (what a key bound to the account may see: the endpoints it may use).
 */
export async function getAccount(db: Db, account: string, onlyEndpoints?: readonly string[]): Promise<AccountView> {
  const keys = onlyEndpoints === undefined ? null : sql`${`{${onlyEndpoints.map((k) => JSON.stringify(k)).join(",")}}`}::text[]`;
  const [row] = await db.select().from(accounts).where(eq(accounts.account, account));
  const [plan] = row?.planId
    ? await db.select({ id: plans.id, key: plans.key, name: plans.name }).from(plans).where(eq(plans.id, row.planId))
    : await db.select({ id: plans.id, key: plans.key, name: plans.name }).from(plans).where(eq(plans.isDefault, true));
  if (!plan) throw new Error("no default plan: the plans table has no row with is_default");

  // What binds, from the same functions the status API and the dashboard read: one rule, in SQL.
  const ceilingRows = await db
    .select({
      ceilingId: ceilings.id,
      endpoint: endpoints.key,
      metric: ceilings.metric,
      window: ceilings.window,
      value: sql<string>`(ceilings.caller_limit(${ceilings.id}, ${account})).value`,
      source: sql<BindingSource>`(ceilings.caller_limit(${ceilings.id}, ${account})).source`,
      endsAt: sql<string | null>`(ceilings.caller_limit(${ceilings.id}, ${account})).ends_at`,
    })
    .from(ceilings)
    .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
    .where(and(eq(ceilings.scope, "caller"), isNull(endpoints.archivedAt), keys ? sql`${endpoints.key} = any(${keys})` : undefined))
    .orderBy(asc(endpoints.key), asc(ceilings.id));

  const budgetRows = await db
    .select({
      key: budgets.key,
      currency: budgets.currency,
      window: budgets.window,
      value: sql<string>`(ceilings.account_budget_limit(${budgets.id}, ${account})).value`,
      source: sql<BindingSource>`(ceilings.account_budget_limit(${budgets.id}, ${account})).source`,
      endsAt: sql<string | null>`(ceilings.account_budget_limit(${budgets.id}, ${account})).ends_at`,
    })
    .from(budgets)
    .where(
      and(
        eq(budgets.scope, "account"),
        isNull(budgets.archivedAt),
        keys
          ? sql`exists (select 1 from budget_members m join endpoints x on x.id = m.endpoint_id where m.budget_id = ${budgets.id} and x.key = any(${keys}))`
          : undefined,
      ),
    )
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
    ceilings: ceilingRows.map((c) => ({
      ceilingId: c.ceilingId,
      endpoint: c.endpoint,
      metric: c.metric,
      window: c.window,
      value: Number(c.value),
      source: c.source,
      overrideEndsAt: c.endsAt === null ? null : new Date(c.endsAt),
    })),
    budgets: budgetRows.map((b) => ({
      budget: b.key,
      currency: b.currency,
      window: b.window,
      value: Number(b.value),
      source: b.source,
      overrideEndsAt: b.endsAt === null ? null : new Date(b.endsAt),
    })),
  };
}
