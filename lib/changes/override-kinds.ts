import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { budgets, ceilings, endpoints, type Budget, type Ceiling } from "@/db/schema";
import type { LimitKind } from "@/lib/vocabulary";
import { durationText, overrideOf } from "@/lib/limits/overrides";
import { MAX_END_SECONDS } from "@/lib/control/ends";
import { moneyInputText, clampToBounds } from "@/lib/limits/parse";
import { removeBudgetOverride, setBudgetOverride } from "@/lib/budgets/change";
import { lockedBudget } from "@/lib/budgets/write";
import { CatalogError } from "@/lib/limits/errors";
import { CeilingError } from "@/lib/ceilings/errors";
import { lockCeiling } from "@/lib/ceilings/lock";
import { CallerKey } from "@/lib/canonical/caller";
import { removeOverride, setOverride } from "@/lib/ceilings/overrides";
import { formatCount, formatMoney } from "@/lib/format";
import { planLimit } from "@/lib/limits/loosening";
import { parseChange } from "./ceiling-kinds";
import { ChangeControlError } from "@/lib/control/errors";
import { type Applied, type KindHandler, movedSince, type Prepared, staleMessage } from "./prepared";

// A per-account override above what binds the account (its override in force, else its plan's
// value or the limit's own: ceilings.plan_limit), or removed below what its plan gives it: a raise
// for one account, asked as `ceiling.override` or `budget.override` and applied through
// setOverride / setBudgetOverride (removeOverride / removeBudgetOverride) under their locks.

const Caller = z.string().min(1).max(400);
const Value = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable();
// An override that ends by itself: the end counts from when it is applied, not asked.
const Ends = z.number().int().min(1).max(MAX_END_SECONDS).optional();
const CeilingOverride = z.strictObject({ ceilingId: z.number().int().positive(), caller: Caller, value: Value, expiresAfterSeconds: Ends });
const BudgetOverride = z.strictObject({ budgetKey: z.string().min(1).max(64), caller: Caller, value: Value, expiresAfterSeconds: Ends });

/** " for 3 hours" when the override ends by itself. */
const endText = (seconds: number | undefined) => (seconds === undefined ? "" : ` for ${durationText(seconds)}`);

function callerOf(raw: string): string {
  const parsed = CallerKey.safeParse(raw);
  if (!parsed.success) throw new ChangeControlError("invalid_input", parsed.error.issues[0]?.message ?? "invalid billing account");
  return parsed.data;
}

const base = { budgetId: null, confirm: null, mayEnd: false } as const;

/** The override in force and what the account's plan gives it: the approval compares both. */
async function overrideState(db: Db, limit: { kind: LimitKind; id: number; limitId: number }, caller: string) {
  return {
    override: await overrideOf(db, limit.limitId, caller),
    plan: await planLimit(db, { kind: limit.kind, limitId: limit.id, account: caller }),
  };
}

const ends = (c: { value: number | null; expiresAfterSeconds?: number }) =>
  c.value !== null && c.expiresAfterSeconds !== undefined ? { expiresAfterSeconds: c.expiresAfterSeconds } : {};

/** An override that ends below what the account then gets: its end is a raise one person scheduled. */
const endsBelow = (c: { value: number | null; expiresAfterSeconds?: number }, after: number, fallback: number) =>
  c.value !== null && c.expiresAfterSeconds !== undefined && fallback > after;

const gone = (error: unknown): string | null =>
  (error instanceof CatalogError || error instanceof CeilingError) && (error.code === "not_found" || error.code === "conflict") ? error.message : null;

export const ceilingOverride: KindHandler = {
  async prepare(db, raw): Promise<Prepared> {
    const change = parseChange(CeilingOverride, raw);
    const caller = callerOf(change.caller);
    const [row] = await db
      .select({ ceiling: ceilings, endpoint: endpoints })
      .from(ceilings)
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .where(eq(ceilings.id, change.ceilingId));
    if (!row) throw new ChangeControlError("not_found", `no ceiling #${change.ceilingId}`);
    if (row.ceiling.scope !== "caller") throw new ChangeControlError("invalid_input", "overrides apply to per-caller ceilings only");
    const state = await overrideState(db, { kind: "ceiling", ...row.ceiling }, caller);
    const before = state.override ?? state.plan ?? row.ceiling.value;
    if (change.value === null && state.override === null) throw new ChangeControlError("unchanged", `${caller} has no override on this ceiling`);
    const after =
      change.value === null ? (state.plan ?? row.ceiling.value) : clampToBounds(change.value, { min: row.ceiling.minValue, max: row.ceiling.maxValue }).applied;
    const worst = (v: number) => ({ units: row.ceiling.metric === "units" ? v : v * row.endpoint.perCallMax, micros: null });
    return {
      ...base,
      change: { ceilingId: row.ceiling.id, caller, value: change.value === null ? null : after, ...ends(change) },
      before: state,
      after: { override: change.value === null ? null : after },
      summary: `${row.endpoint.key} #${row.ceiling.id} for account ${caller}: ${formatCount(before)} → ${change.value === null ? `override removed (${formatCount(after)})` : formatCount(after)}${endText(change.expiresAfterSeconds)}`,
      endpointId: row.endpoint.id,
      ceilingId: row.ceiling.id,
      worstBefore: worst(before),
      worstAfter: worst(after),
      currency: null,
      raise: after > before || endsBelow(change, after, state.plan ?? row.ceiling.value),
    };
  },
  async apply({ tx, request, actor, control }): Promise<Applied> {
    const change = parseChange(CeilingOverride, request.change);
    let ceiling: Ceiling;
    try {
      ceiling = (await lockCeiling(tx, change.ceilingId)).ceiling;
    } catch (error) {
      const message = gone(error);
      if (message) return { stale: message };
      throw error;
    }
    const moved = movedSince(request.before, await overrideState(tx, { kind: "ceiling", ...ceiling }, change.caller));
    if (moved.length > 0) return { stale: staleMessage(moved) };
    const common = { ceilingId: change.ceilingId, caller: change.caller, actor, reason: request.reason, changeControl: control };
    if (change.value === null) await removeOverride(tx, common);
    else await setOverride(tx, { ...common, input: String(change.value), expiresAfterSeconds: change.expiresAfterSeconds ?? null });
    return { stale: null, raised: null };
  },
};

export const budgetOverride: KindHandler = {
  async prepare(db, raw): Promise<Prepared> {
    const change = parseChange(BudgetOverride, raw);
    const caller = callerOf(change.caller);
    const [budget] = await db.select().from(budgets).where(eq(budgets.key, change.budgetKey));
    if (!budget) throw new ChangeControlError("not_found", `no budget '${change.budgetKey}'`);
    if (budget.scope !== "account") throw new ChangeControlError("invalid_input", `${budget.key} is a global budget: overrides are for a per-account budget`);
    const state = await overrideState(db, { kind: "budget", ...budget }, caller);
    const before = state.override ?? state.plan ?? budget.value;
    if (change.value === null && state.override === null) throw new ChangeControlError("unchanged", `${caller} has no override on ${budget.key}`);
    const after = change.value === null ? (state.plan ?? budget.value) : clampToBounds(change.value, { min: budget.minValue, max: budget.maxValue }).applied;
    const money = (v: number) => formatMoney(v, budget.currency);
    return {
      ...base,
      change: { budgetKey: budget.key, caller, value: change.value === null ? null : after, ...ends(change) },
      before: state,
      after: { override: change.value === null ? null : after },
      summary: `budget ${budget.key} for account ${caller}: ${money(before)} → ${change.value === null ? `override removed (${money(after)})` : money(after)}${endText(change.expiresAfterSeconds)}`,
      endpointId: null,
      ceilingId: null,
      budgetId: budget.id,
      worstBefore: { units: null, micros: before },
      worstAfter: { units: null, micros: after },
      currency: budget.currency,
      raise: after > before || endsBelow(change, after, state.plan ?? budget.value),
    };
  },
  async apply({ tx, request, actor, control }): Promise<Applied> {
    const change = parseChange(BudgetOverride, request.change);
    let budget: Budget;
    try {
      budget = (await lockedBudget(tx, change.budgetKey)).budget;
    } catch (error) {
      const message = gone(error);
      if (message) return { stale: message };
      throw error;
    }
    const moved = movedSince(request.before, await overrideState(tx, { kind: "budget", ...budget }, change.caller));
    if (moved.length > 0) return { stale: staleMessage(moved) };
    const common = { key: change.budgetKey, caller: change.caller, actor, reason: request.reason, changeControl: control };
    if (change.value === null) await removeBudgetOverride(tx, common);
    else await setBudgetOverride(tx, { ...common, input: moneyInputText(change.value), expiresAfterSeconds: change.expiresAfterSeconds ?? null });
    return { stale: null, raised: null };
  },
};
