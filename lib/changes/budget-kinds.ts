import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { budgets, type Budget } from "@/db/schema";
import { CatalogError, zodIssues } from "@/lib/limits/errors";
import { archiveLocked } from "@/lib/budgets/archive";
import { insertBudget } from "@/lib/budgets/create";
import { updateBudgetFields } from "@/lib/budgets/update";

import { readBudget } from "@/lib/budgets/read";
import { BudgetFields, BudgetSpec } from "@/lib/budgets/spec";
import { BUDGET_RE_ADD_WINDOW_HOURS, loosenedArchivedBudget, looserRecentBudget } from "@/lib/budgets/re-add";
import { endpointsByKey, lockedBudget } from "@/lib/budgets/write";
import { issueLine, InputError } from "@/lib/errors";
import { formatMoney } from "@/lib/format";
import { parseAt, parseChange } from "./ceiling-kinds";
import { ChangeControlError } from "@/lib/control/errors";
import { type KindHandler, movedSince, staleMessage } from "./prepared";
import { isNewValueRaise } from "@/lib/control/raise";

// The kinds on a budget of its own: an unarchive, an archive, its members, a new budget above its
// default (its value and bounds are asked as a ceiling's are: limit-kinds.ts). Applied under the
// members' endpoint locks and the budget row (lockedBudget), through the budget verbs' own writes.
// A budget counts money: its worst case is its value in micros, no units.

const Key = z.string({ error: "a budget key is required" }).min(1, "a budget key is required").max(64);

const money = (b: Pick<Budget, "currency">, micros: number) => formatMoney(micros, b.currency);

async function budgetByKey(db: Db, key: string): Promise<Budget> {
  const [row] = await db.select().from(budgets).where(eq(budgets.key, key));
  if (!row) throw new ChangeControlError("not_found", `no budget '${key}'`);
  return row;
}

/** The budget is gone (or its members moved under us): stale, not an error. */
async function lockedOrStale(db: Db, key: string): Promise<Budget | { gone: string }> {
  try {
    return (await lockedBudget(db, key)).budget;
  } catch (error) {
    if (error instanceof CatalogError && (error.code === "not_found" || error.code === "conflict")) return { gone: error.message };
    throw error;
  }
}

const base = { endpointId: null, ceilingId: null, confirm: null, mayEnd: false } as const;
export const worstOf = (b: Pick<Budget, "value" | "archivedAt">) => (b.archivedAt !== null ? null : { units: null, micros: b.value });

/** The budget's fields as they are, with new bounds: the default is pulled inside them as a ceiling's is. */
export async function fieldsWithBounds(db: Db, key: string, bounds: { min: number; max: number }): Promise<BudgetFields> {
  const { spec } = await readBudget(db, key);
  const parsed = BudgetFields.safeParse({
    name: spec.name,
    members: spec.members,
    alertThresholds: spec.alertThresholds,
    min: bounds.min,
    max: bounds.max,
    default: Math.min(Math.max(spec.default, bounds.min), bounds.max),
  });
  if (!parsed.success) throw InputError.of(zodIssues(parsed.error).map(issueLine).join("; "));
  return parsed.data;
}

// ---- budget.unarchive ----------------------------------------------------------------------------

const Unarchive = z.strictObject({ budgetKey: Key });

export const budgetUnarchive: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(Unarchive, raw);
    const budget = await budgetByKey(db, change.budgetKey);
    if (budget.archivedAt === null) throw new ChangeControlError("unchanged", `budget ${budget.key} is not archived`);
    return {
      ...base,
      change,
      before: { archived: true },
      after: { archived: false },
      summary: `budget ${budget.key} unarchive (${money(budget, budget.value)})`,
      budgetId: budget.id,
      worstBefore: null,
      worstAfter: worstOf({ ...budget, archivedAt: null }),
      currency: budget.currency,
      raise: true,
    };
  },
  async apply({ tx, request, actor, control }) {
    const change = parseChange(Unarchive, request.change);
    const budget = await lockedOrStale(tx, change.budgetKey);
    if ("gone" in budget) return { stale: budget.gone };
    const moved = movedSince(request.before, { archived: budget.archivedAt !== null });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await archiveLocked({ tx, actor, reason: request.reason, changeControl: control }, budget, false);
    return { stale: null, raised: null };
  },
};

// ---- budget.create -------------------------------------------------------------------------------

const Create = z.strictObject({ spec: z.unknown() });

export const budgetCreate: KindHandler = {
  async prepare(db, raw) {
    const spec = parseAt(BudgetSpec, parseChange(Create, raw).spec, "spec");
    const [exists] = await db.select({ id: budgets.id }).from(budgets).where(eq(budgets.key, spec.key));
    if (exists) throw InputError.of(`a budget with key '${spec.key}' already exists`);
    const memberIds = [...(await endpointsByKey(db, spec.members)).values()].map((e) => e.id);
    const loosened = await loosenedArchivedBudget(db, spec, memberIds);
    return {
      ...base,
      change: { spec },
      before: { exists: false },
      after: { value: spec.value, default: spec.default },
      summary: `new budget ${spec.key} ${formatMoney(spec.value, spec.currency)} (default ${formatMoney(spec.default, spec.currency)})${loosened ? `, looser than ${loosened} archived in the last ${BUDGET_RE_ADD_WINDOW_HOURS} hours` : ""}`,
      budgetId: null,
      worstBefore: null,
      worstAfter: spec.archived ? null : { units: null, micros: spec.killed ? 0 : spec.value },
      currency: spec.currency,
      raise: isNewValueRaise(spec) || loosened !== null,
    };
  },
  async apply({ tx, request, actor, control }) {
    const spec = parseAt(BudgetSpec, parseChange(Create, request.change).spec, "spec");
    const [exists] = await tx.select({ id: budgets.id }).from(budgets).where(eq(budgets.key, spec.key));
    if (exists) return { stale: `a budget with key '${spec.key}' was created since it was asked: nothing was applied` };
    await insertBudget({ tx, actor, reason: request.reason, changeControl: control }, spec);
    return { stale: null, raised: null };
  },
};

// ---- budget.members ------------------------------------------------------------------------------

const Members = z.strictObject({ budgetKey: Key, members: z.array(z.string().min(1).max(64)).min(1, "a budget needs at least one member").max(200) });
const sorted = (keys: readonly string[]) => [...keys].sort();

/** A member removed from a live budget: its calls no longer count against the budget (lib/budgets/change.ts). */
export const budgetMembers: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(Members, raw);
    const budget = await budgetByKey(db, change.budgetKey);
    const { spec } = await readBudget(db, budget.key);
    const removed = spec.members.filter((m) => !change.members.includes(m));
    const added = change.members.filter((m) => !spec.members.includes(m));
    if (removed.length === 0 && added.length === 0) throw new ChangeControlError("unchanged", "those are already its members: nothing to ask");
    const moves = [...added.map((m) => `+ ${m}`), ...removed.map((m) => `- ${m}`)].join(", ");
    return {
      ...base,
      change: { budgetKey: budget.key, members: sorted(change.members) },
      before: { members: sorted(spec.members), archived: budget.archivedAt !== null },
      after: { members: sorted(change.members) },
      summary: `budget ${budget.key} members ${moves}${removed.length > 0 ? ` (${removed.join(", ")} no longer held to ${money(budget, budget.value)})` : ""}`,
      budgetId: budget.id,
      // The budget's own worst case is its value either way; what a removal frees is the removed
      // members' spend, which no budget's value holds any longer.
      worstBefore: worstOf(budget),
      worstAfter: worstOf(budget),
      currency: budget.currency,
      raise: budget.archivedAt === null && removed.length > 0,
    };
  },
  async apply({ tx, request, actor, control }) {
    const change = parseChange(Members, request.change);
    const budget = await lockedOrStale(tx, change.budgetKey);
    if ("gone" in budget) return { stale: budget.gone };
    const { spec } = await readBudget(tx, budget.key);
    const moved = movedSince(request.before, { members: sorted(spec.members), archived: budget.archivedAt !== null });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    const parsed = BudgetFields.safeParse({
      name: spec.name,
      members: change.members,
      alertThresholds: spec.alertThresholds,
      min: spec.min,
      max: spec.max,
      default: spec.default,
    });
    if (!parsed.success) throw InputError.of(zodIssues(parsed.error).map(issueLine).join("; "));
    await updateBudgetFields({ tx, actor, reason: request.reason, changeControl: control }, budget.key, parsed.data);
    return { stale: null, raised: null };
  },
};

// ---- budget.archive ------------------------------------------------------------------------------

const Archive = z.strictObject({ budgetKey: Key });

/** Archiving a budget while a looser one created in the last 24 hours shares its members (lib/budgets/re-add.ts). */
export const budgetArchive: KindHandler = {
  async prepare(db, raw) {
    const change = parseChange(Archive, raw);
    const budget = await budgetByKey(db, change.budgetKey);
    if (budget.archivedAt !== null) throw new ChangeControlError("unchanged", `budget ${budget.key} is already archived`);
    const looser = await looserRecentBudget(db, budget);
    return {
      ...base,
      change,
      before: { archived: false },
      after: { archived: true },
      summary: `budget ${budget.key} archive${looser ? ` (${looser}, created in the last ${BUDGET_RE_ADD_WINDOW_HOURS} hours over the same members, lets more through)` : ""}`,
      budgetId: budget.id,
      worstBefore: worstOf(budget),
      worstAfter: null,
      currency: budget.currency,
      raise: looser !== null,
    };
  },
  async apply({ tx, request, actor, control }) {
    const change = parseChange(Archive, request.change);
    const budget = await lockedOrStale(tx, change.budgetKey);
    if ("gone" in budget) return { stale: budget.gone };
    const moved = movedSince(request.before, { archived: budget.archivedAt !== null });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await archiveLocked({ tx, actor, reason: request.reason, changeControl: control }, budget, true);
    return { stale: null, raised: null };
  },
};
