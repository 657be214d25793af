import { InputError } from "@/lib/errors";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { budgets, ceilings, endpoints } from "@/db/schema";
import type { LimitKind } from "@/lib/vocabulary";
import { durationText, overrideOf } from "@/lib/limits/overrides";
import { MAX_END_SECONDS } from "@/lib/control/ends";
import { moneyInputText, clampToBounds } from "@/lib/limits/parse";
import { removeBudgetOverride, setBudgetOverride } from "@/lib/budgets/overrides";
import { lockedBudget } from "@/lib/budgets/write";

import { lockCeiling } from "@/lib/ceilings/lock";
import { CallerKey } from "@/lib/canonical/caller";
import { removeOverride, setOverride } from "@/lib/ceilings/overrides";
import { formatCount, formatMoney } from "@/lib/format";
import { planLimit } from "@/lib/limits/loosening";
import { parseChange } from "./ceiling-kinds";
import { goneMessage } from "./limit-kinds";
import { ChangeControlError } from "@/lib/control/errors";
import { type Applied, type KindHandler, movedSince, type Prepared, staleMessage, type Worst } from "./prepared";
import type { AuditActor } from "@/lib/audit/record";
import type { ChangeControl } from "@/lib/control/context";

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
  if (!parsed.success) throw InputError.of(parsed.error.issues[0]?.message ?? "invalid billing account");
  return parsed.data;
}

/** The override in force and what the account's plan gives it: the approval compares both. */
async function overrideState(db: Db, limit: { kind: LimitKind; id: number; limitId: number }, caller: string) {
  return {
    override: await overrideOf(db, limit.limitId, caller),
    plan: await planLimit(db, { kind: limit.kind, limitId: limit.id, account: caller }),
  };
}

/** A per-account limit as an override request sees it, whichever the kind. */
type Limit = { kind: LimitKind; id: number; limitId: number; value: number; minValue: number; maxValue: number };
type Asked = { caller: string; value: number | null; expiresAfterSeconds?: number };
type Verb = { caller: string; actor: AuditActor; reason: string; changeControl: ChangeControl };

/** What differs between the kinds: how a request names its limit, finds and locks it, words and writes a value. */
type OverrideKind<C extends Asked> = {
  schema: z.ZodType<C>;
  /** The limit a request names, with what the request records beside it; it throws not_found. */
  find(
    db: Db,
    change: C,
  ): Promise<{
    limit: Limit;
    named: Record<string, unknown>;
    label: string;
    ids: Pick<Prepared, "endpointId" | "ceilingId" | "budgetId">;
    format(v: number): string;
    worst(v: number): Worst;
    currency: string | null;
  }>;
  lock(tx: Db, change: C): Promise<Limit>;
  set(tx: Db, change: C, verb: Verb, value: number): Promise<unknown>;
  remove(tx: Db, change: C, verb: Verb): Promise<unknown>;
};

/** One change-request kind for an override, on a per-caller ceiling or a per-account budget. */
function overrideHandler<C extends Asked>(k: OverrideKind<C>): KindHandler {
  return {
    async prepare(db, raw): Promise<Prepared> {
      const change = parseChange(k.schema, raw);
      const caller = callerOf(change.caller);
      const found = await k.find(db, change);
      const { limit } = found;
      const state = await overrideState(db, limit, caller);
      const before = state.override ?? state.plan ?? limit.value;
      if (change.value === null && state.override === null) throw new ChangeControlError("unchanged", `${caller} has no override on ${found.label}`);
      const fallback = state.plan ?? limit.value;
      const after = change.value === null ? fallback : clampToBounds(change.value, { min: limit.minValue, max: limit.maxValue }).applied;
      // An end counts only with a value; one that ends below what the account then gets is a raise
      // one person scheduled.
      const ends = change.value !== null && change.expiresAfterSeconds !== undefined ? change.expiresAfterSeconds : undefined;
      return {
        ...found.ids,
        confirm: null,
        mayEnd: false,
        change: { ...found.named, caller, value: change.value === null ? null : after, ...(ends === undefined ? {} : { expiresAfterSeconds: ends }) },
        before: state,
        after: { override: change.value === null ? null : after },
        summary: `${found.label} for account ${caller}: ${found.format(before)} → ${change.value === null ? `override removed (${found.format(after)})` : found.format(after)}${endText(change.expiresAfterSeconds)}`,
        worstBefore: found.worst(before),
        worstAfter: found.worst(after),
        currency: found.currency,
        raise: after > before || (ends !== undefined && fallback > after),
      };
    },
    async apply({ tx, request, actor, control }): Promise<Applied> {
      const change = parseChange(k.schema, request.change);
      let limit: Limit;
      try {
        limit = await k.lock(tx, change);
      } catch (error) {
        const message = goneMessage(error);
        if (message) return { stale: message };
        throw error;
      }
      const moved = movedSince(request.before, await overrideState(tx, limit, change.caller));
      if (moved.length > 0) return { stale: staleMessage(moved) };
      const verb = { caller: change.caller, actor, reason: request.reason, changeControl: control };
      if (change.value === null) await k.remove(tx, change, verb);
      else await k.set(tx, change, verb, change.value);
      return { stale: null, raised: null };
    },
  };
}

export const ceilingOverride = overrideHandler({
  schema: CeilingOverride,
  async find(db, change) {
    const [row] = await db
      .select({ ceiling: ceilings, endpoint: endpoints })
      .from(ceilings)
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .where(eq(ceilings.id, change.ceilingId));
    if (!row) throw new ChangeControlError("not_found", `no ceiling #${change.ceilingId}`);
    if (row.ceiling.scope !== "caller") throw InputError.of("overrides apply to per-caller ceilings only");
    const { ceiling, endpoint } = row;
    return {
      limit: { kind: "ceiling", ...ceiling },
      named: { ceilingId: ceiling.id },
      label: `${endpoint.key} #${ceiling.id}`,
      ids: { endpointId: endpoint.id, ceilingId: ceiling.id, budgetId: null },
      format: formatCount,
      worst: (v) => ({ units: ceiling.metric === "units" ? v : v * endpoint.perCallMax, micros: null }),
      currency: null,
    };
  },
  lock: async (tx, change) => ({ kind: "ceiling", ...(await lockCeiling(tx, change.ceilingId)).ceiling }),
  set: (tx, change, verb, value) =>
    setOverride(tx, { ...verb, ceilingId: change.ceilingId, input: String(value), expiresAfterSeconds: change.expiresAfterSeconds ?? null }),
  remove: (tx, change, verb) => removeOverride(tx, { ...verb, ceilingId: change.ceilingId }),
});

export const budgetOverride = overrideHandler({
  schema: BudgetOverride,
  async find(db, change) {
    const [budget] = await db.select().from(budgets).where(eq(budgets.key, change.budgetKey));
    if (!budget) throw new ChangeControlError("not_found", `no budget '${change.budgetKey}'`);
    if (budget.scope !== "account") throw InputError.of(`${budget.key} is a global budget: overrides are for a per-account budget`);
    return {
      limit: { kind: "budget", ...budget },
      named: { budgetKey: budget.key },
      label: `budget ${budget.key}`,
      ids: { endpointId: null, ceilingId: null, budgetId: budget.id },
      format: (v) => formatMoney(v, budget.currency),
      worst: (v) => ({ units: null, micros: v }),
      currency: budget.currency,
    };
  },
  lock: async (tx, change) => ({ kind: "budget", ...(await lockedBudget(tx, change.budgetKey)).budget }),
  set: (tx, change, verb, value) =>
    setBudgetOverride(tx, { ...verb, key: change.budgetKey, input: moneyInputText(value), expiresAfterSeconds: change.expiresAfterSeconds ?? null }),
  remove: (tx, change, verb) => removeBudgetOverride(tx, { ...verb, key: change.budgetKey }),
});
