import { inArray } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "@/db/client";
import { endpoints } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { CatalogError, invalidInput, requireCatalogReason, zodIssues } from "@/lib/limits/errors";
import { requireApproval, type ChangeControl } from "@/lib/control/context";
import { moveBounds, requireBoundsApproval } from "@/lib/limits/bounds";
import { clampPlanValues } from "@/lib/limits/plan-values";
import type { BudgetWindow } from "@/lib/vocabulary";
import { budgetSentence } from "./money";
import { BudgetFields } from "./spec";
import { budgetMoney as money, budgetTarget } from "./target";
import { type BudgetChange, endpointsByKey, lockedBudget, lockedMembers, recordBudgetChange, saveBudget, setMembers } from "./write";

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidInput(zodIssues(parsed.error));
  return parsed.data;
}

export type UpdateBudgetParams = { key: string; expectedVersion: number; fields: unknown; actor: AuditActor; reason: string; changeControl?: ChangeControl };
export type BudgetFieldChange = {
  field: "name" | "members" | "alertThresholds" | "min" | "max" | "default" | "value" | "valueBeforeKill";
  before: unknown;
  after: unknown;
};

export async function updateBudget(db: Db, p: UpdateBudgetParams): Promise<BudgetFieldChange[]> {
  const fields = parse(BudgetFields, p.fields);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const changes = await updateBudgetFields({ tx, actor: p.actor, reason, changeControl: p.changeControl }, p.key, fields, {
      expectedVersion: p.expectedVersion,
    });
    if (changes.length === 0) throw new CatalogError("unchanged", "nothing changed: every field already has that value");
    return changes;
  });
}

const sameList = (a: readonly (string | number)[], b: readonly (string | number)[]) =>
  a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");

/**
 * Changes what may change on a budget, under the locks of its old and new members. New bounds
 * pull the value (and the value a restore puts back) inside them, as a ceiling's do; that is
 * logged with the change. Nothing changed: no write, no event.
 */
export async function updateBudgetFields(
  p: BudgetChange,
  key: string,
  next: BudgetFields,
  opts: { expectedVersion?: number; mayBeArchived?: ReadonlySet<string> } = {},
): Promise<BudgetFieldChange[]> {
  const wanted = [...(await endpointsByKey(p.tx, next.members)).values()].map((e) => e.id);
  const { budget, memberIds } = await lockedBudget(p.tx, key, { expectedVersion: opts.expectedVersion, alsoLock: wanted });
  const currentKeys = memberIds.length
    ? (await p.tx.select({ key: endpoints.key }).from(endpoints).where(inArray(endpoints.id, memberIds))).map((e) => e.key)
    : [];
  // A member that was archived after it joined stays until it is removed; a new one must be live.
  const members = await lockedMembers(p.tx, next.members, budget.currency, new Set([...currentKeys, ...(opts.mayBeArchived ?? [])]), [...wanted, ...memberIds]);
  const move = moveBounds(budget, next, next.default);
  const changes: BudgetFieldChange[] = [];
  const add = (field: BudgetFieldChange["field"], before: unknown, after: unknown) => changes.push({ field, before, after });
  if (budget.name !== next.name) add("name", budget.name, next.name);
  if (!sameList(currentKeys, next.members)) add("members", [...currentKeys].sort(), [...next.members].sort());
  const thresholds = [...budget.alertThresholds].sort((a, b) => a - b);
  if (thresholds.join(",") !== next.alertThresholds.join(",")) add("alertThresholds", thresholds, next.alertThresholds);
  if (budget.minValue !== next.min) add("min", budget.minValue, next.min);
  if (budget.maxValue !== next.max) add("max", budget.maxValue, next.max);
  if (budget.defaultValue !== next.default) add("default", budget.defaultValue, next.default);
  if (move.value !== budget.value) add("value", budget.value, move.value);
  if (move.valueBeforeKill !== budget.valueBeforeKill) add("valueBeforeKill", budget.valueBeforeKill, move.valueBeforeKill);
  if (changes.length === 0) return [];
  // New bounds, or a default raised where a restore would bring it back, may loosen spend.
  await requireBoundsApproval(p.tx, budgetTarget(p.tx, budget), move, p.changeControl);
  // A member removed from a live budget: its calls stop counting against the budget (a raise).
  const removed = currentKeys.filter((k) => !next.members.includes(k));
  if (removed.length > 0 && budget.archivedAt === null) {
    requireApproval(
      p.changeControl,
      `removing ${removed.join(", ")} from budget ${budget.key} (its calls would no longer count against ${money(budget, budget.value)})`,
      {
        kind: "budget.members",
        change: { budgetKey: budget.key, members: [...next.members].sort() },
      },
    );
  }
  const saved = await saveBudget(p.tx, budget.id, {
    name: next.name,
    alertThresholds: next.alertThresholds,
    minValue: next.min,
    maxValue: next.max,
    defaultValue: next.default,
    value: move.value,
    valueBeforeKill: move.valueBeforeKill,
  });
  if (changes.some((c) => c.field === "members"))
    await setMembers(
      p.tx,
      budget.id,
      members.map((m) => m.id),
    );
  const shape = (v: number, keys: readonly string[]) =>
    budgetSentence({ ...budget, window: budget.window as BudgetWindow, value: v, members: [...keys].sort() });
  await recordBudgetChange(p, budget, {
    action: "budget.update",
    previousValue: budget.value,
    appliedValue: saved.value,
    clamped: move.valueClamped !== null,
    details: {
      changes: Object.fromEntries(changes.map((c) => [c.field, { before: c.before, after: c.after }])),
      worstCase: { before: shape(budget.value, currentKeys), after: shape(saved.value, next.members) },
    },
  });
  // The plans' values on this budget live inside its bounds too (each moved one logged).
  if (budget.minValue !== next.min || budget.maxValue !== next.max)
    await clampPlanValues(p, { kind: "budget", id: budget.id, limitId: budget.limitId, key: budget.key, currency: budget.currency }, next);
  return changes;
}
