import { asc, eq, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgetMembers, budgets, endpoints, type Budget } from "@/db/schema";
import { listOverrides } from "@/lib/limits/overrides";
import { CatalogError } from "@/lib/limits/errors";
import { budgetSentence } from "./money";
import type { BudgetSpec } from "./spec";

// The budgets as they are in the database, in the spec's terms: what export writes, what plan
// compares a file with, and what the edit form starts from.

export type CatalogBudget = { budget: Budget; members: { id: number; key: string }[]; spec: BudgetSpec };

/** A budget's value as a spec says it: a killed budget is `killed: true` with the value a restore puts back. */
export function isKilled(b: Pick<Budget, "value" | "valueBeforeKill">): boolean {
  return b.value === 0 && b.valueBeforeKill !== null;
}

/** Every budget (archived ones too) with its members (by key) and overrides, in key order. */
export async function readBudgets(db: Db, keys?: string[]): Promise<CatalogBudget[]> {
  const rows = await (keys ? db.select().from(budgets).where(inArray(budgets.key, keys)) : db.select().from(budgets)).orderBy(asc(budgets.key));
  if (rows.length === 0) return [];
  const ids = rows.map((b) => b.id);
  const [memberRows, overrideRows] = await Promise.all([
    db
      .select({ budgetId: budgetMembers.budgetId, id: endpoints.id, key: endpoints.key })
      .from(budgetMembers)
      .innerJoin(endpoints, eq(endpoints.id, budgetMembers.endpointId))
      .where(inArray(budgetMembers.budgetId, ids))
      .orderBy(asc(endpoints.key)),
    listOverrides(db, "budget", ids),
  ]);
  return rows.map((budget) => {
    const members = memberRows.filter((m) => m.budgetId === budget.id).map(({ id, key }) => ({ id, key }));
    const killed = isKilled(budget);
    const spec: BudgetSpec = {
      key: budget.key,
      name: budget.name,
      currency: budget.currency,
      scope: budget.scope,
      window: budget.window as BudgetSpec["window"],
      billingDay: budget.billingDay,
      value: killed ? (budget.valueBeforeKill ?? 0) : budget.value,
      min: budget.minValue,
      max: budget.maxValue,
      default: budget.defaultValue,
      alertThresholds: [...budget.alertThresholds].sort((a, b) => a - b),
      members: members.map((m) => m.key),
      overrides: overrideRows
        .filter((o) => o.id === budget.id)
        .map((o) => ({ caller: o.caller, value: o.value, reason: o.reason, ...(o.expiresAt ? { until: o.expiresAt.toISOString() } : {}) })),
      archived: budget.archivedAt !== null,
      ...(killed ? { killed: true } : {}),
    };
    return { budget, members, spec };
  });
}

export async function readBudget(db: Db, key: string): Promise<CatalogBudget> {
  const [found] = await readBudgets(db, [key]);
  if (!found) throw new CatalogError("not_found", `no budget '${key}'`);
  return found;
}

/** The worst-case sentence of a budget as it is in force (a killed budget says so). */
export function budgetSentenceOf(b: CatalogBudget): string {
  return budgetSentence({ ...b.spec, value: b.budget.value, members: b.spec.members });
}

/** The keys of every live budget an endpoint belongs to: what an endpoint page lists. */
export async function budgetKeysOfEndpoint(db: Db, endpointId: number): Promise<string[]> {
  const rows = await db
    .select({ key: budgets.key })
    .from(budgetMembers)
    .innerJoin(budgets, eq(budgets.id, budgetMembers.budgetId))
    .where(eq(budgetMembers.endpointId, endpointId))
    .orderBy(asc(budgets.key));
  return rows.map((r) => r.key);
}

/** Every endpoint a budget form offers as a member, archived ones marked, in key order. */
export async function listMemberOptions(db: Db): Promise<{ key: string; name: string; currency: string; archived: boolean }[]> {
  const rows = await db
    .select({ key: endpoints.key, name: endpoints.name, currency: endpoints.currency, archivedAt: endpoints.archivedAt })
    .from(endpoints)
    .orderBy(asc(endpoints.key));
  return rows.map(({ archivedAt, ...r }) => ({ ...r, archived: archivedAt !== null }));
}
