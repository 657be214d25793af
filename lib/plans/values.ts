import { eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings, endpoints, plans, type Budget, type Ceiling, type Endpoint, type Plan } from "@/db/schema";
import { auditOf, auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { lockedBudget } from "@/lib/budgets/write";
import { type ChangeControl, controlDetails, requireApproval } from "@/lib/control/context";
import { CatalogError, invalidInput, requireCatalogReason } from "@/lib/limits/errors";
import { CONFIRM_RAISE_FACTOR, type Clamp } from "@/lib/limits/parse";
import { lockCeiling } from "@/lib/ceilings/lock";
import { formatCount, formatMoney } from "@/lib/format";
import { parsePlanValue, previewPlanValue, type PlanValueKind } from "./preview";
import { PlanKey } from "./spec";
import { dropPlanValue, planValueOf, putPlanValue, savePlan } from "@/lib/limits/plan-values";
import { lockedPlan, recordPlanChange, type PlanChange } from "./write";

// A plan's values: its own value on a per-caller ceiling (units or calls) or on a per-account budget
// (money), for every account on the plan that has no override. Under the same rules as the
// ceiling's own value: inside its bounds (clamped, the clamp logged) or 0, which refuses the plan's
// accounts there; a raise to 5x or more of what binds before is typed twice; input refused as typed
// is logged as plan.rejected and saves nothing. Each edit takes the endpoint locks of what it
// changes first (lib/ceilings/lock.ts, lib/budgets/write.ts), so it binds the next reservation.

export type PlanTarget = { ceilingId: number } | { budgetKey: string };

export type SetPlanValueParams = {
  planKey: string;
  target: PlanTarget;
  /** Exactly what the person typed: a whole number for a ceiling, money ("12.50") for a budget. */
  input: string;
  /** The value typed a second time, required for a raise to 5x or more of what binds now. */
  confirm?: string;
  actor: AuditActor;
  reason: string;
  /** A value above the one in force is a raise: only an approved request (or setup) passes one. */
  changeControl?: ChangeControl;
};

export type RemovePlanValueParams = {
  planKey: string;
  target: PlanTarget;
  actor: AuditActor;
  reason: string;
  /** The own value typed again: required when removing raises the plan's accounts 5x or more. */
  confirm?: string;
  /** Removing a value below the own one is a raise: only an approved request (or setup) passes one. */
  changeControl?: ChangeControl;
};

/** What binds a plan's accounts on a ceiling or budget: the plan's value, else the own standing value. */
export function planBinding(planValue: number | null, own: { value: number; valueBeforeKill: number | null; defaultValue: number }): number {
  return planValue ?? (own.value > 0 ? own.value : (own.valueBeforeKill ?? own.defaultValue));
}

/**
 * What removing a plan's value does to its accounts: they get the own value (the one a restore puts
 * back, while killed), a raise like any other when it is 5x or more of the plan's value.
 */
export function removalRaise(planValue: number, own: number, ownBeforeKill: number | null): { to: number; needsConfirmation: boolean } {
  const to = own > 0 ? own : (ownBeforeKill ?? 0);
  return { to, needsConfirmation: to > planValue && (planValue === 0 || to >= planValue * CONFIRM_RAISE_FACTOR) };
}

export type PlanValueResult = {
  planKey: string;
  /** `email.subscribe units/caller/utc_day` or `budget llm.daily`: what the value is on. */
  on: string;
  previous: number | null;
  applied: number | null;
  typed: number | null;
  clamped: Clamp;
  /** The ceiling's or budget's own value, which binds where the plan sets none. */
  own: number;
  /** A budget's currency; null on a ceiling (units or calls). */
  currency: string | null;
};

function parsePlanKey(raw: string): string {
  const parsed = PlanKey.safeParse(raw);
  if (!parsed.success) throw invalidInput([{ path: "plan", message: parsed.error.issues[0]?.message ?? "invalid plan" }]);
  return parsed.data;
}

const isCeiling = (t: PlanTarget): t is { ceilingId: number } => "ceilingId" in t;

const ceilingName = (endpoint: Pick<Endpoint, "key">, c: Pick<Ceiling, "metric" | "scope" | "window">) => `${endpoint.key} ${c.metric}/${c.scope}/${c.window}`;

/** What the input is read as, without locks: a ceiling counts, a budget counts money in its currency. */
async function kindOf(db: Db, target: PlanTarget): Promise<PlanValueKind> {
  if (isCeiling(target)) return { kind: "count" };
  const [b] = await db.select({ currency: budgets.currency }).from(budgets).where(eq(budgets.key, target.budgetKey));
  return { kind: "money", currency: b?.currency ?? "USD" };
}

/**
 * A value refused as typed ("1e9", "500abc", "-5", empty) saves nothing, but staff can see that it
 * was tried: plan.rejected with the raw input and why. Only for a plan that exists.
 */
async function recordRejectedInput(db: Db, p: SetPlanValueParams, planKey: string, error: string): Promise<void> {
  const [plan] = await db.select({ id: plans.id, key: plans.key }).from(plans).where(eq(plans.key, planKey));
  if (!plan) return;
  const on = isCeiling(p.target) ? await ceilingRef(db, p.target.ceilingId) : null;
  await recordAudit(db, {
    ...(on ? auditOf(p.actor, on.endpoint, on.ceilingId) : auditActorFields(p.actor)),
    action: "plan.rejected",
    target: plan.key,
    rawInput: p.input,
    appliedValue: null,
    clamped: false,
    reason: p.reason.trim() || null,
    details: { planId: plan.id, error, ...(isCeiling(p.target) ? { ceilingId: p.target.ceilingId } : { budgetKey: p.target.budgetKey }) },
  });
}

async function ceilingRef(db: Db, ceilingId: number): Promise<{ endpoint: { id: number; key: string }; ceilingId: number } | null> {
  const [row] = await db
    .select({ id: endpoints.id, key: endpoints.key })
    .from(ceilings)
    .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
    .where(eq(ceilings.id, ceilingId));
  return row ? { endpoint: row, ceilingId } : null;
}

/** Sets a plan's value on a per-caller ceiling or a per-account budget. */
export async function setPlanValue(db: Db, p: SetPlanValueParams): Promise<PlanValueResult> {
  const planKey = parsePlanKey(p.planKey);
  const of = await kindOf(db, p.target);
  const parsed = parsePlanValue(p.input, of);
  if (!parsed.ok) {
    await recordRejectedInput(db, p, planKey, parsed.error);
    throw invalidInput([{ path: "input", message: parsed.error }]);
  }
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const c: PlanChange = { tx, actor: p.actor, reason };
    const target = await lockTarget(tx, p.target);
    const plan = await lockedPlan(tx, planKey);
    const previous = await valueOf(tx, plan, target);
    const own = target.kind === "ceiling" ? target.ceiling : target.budget;
    const preview = previewPlanValue({
      raw: p.input,
      of,
      previous,
      own: own.value,
      ownBeforeKill: own.valueBeforeKill,
      min: own.minValue,
      max: own.maxValue,
    });
    if (!preview.ok) throw invalidInput([{ path: "input", message: preview.error }]);
    if (preview.unchanged) throw new CatalogError("unchanged", preview.message);
    if (preview.needsConfirmation) {
      const confirm = parsePlanValue(p.confirm ?? "", of);
      if (!confirm.ok || confirm.value !== preview.typed) {
        const show = target.kind === "ceiling" ? formatCount(preview.typed) : formatMoney(preview.typed, target.budget.currency);
        throw new CatalogError("confirmation_required", `${preview.message}. The confirmation must be exactly ${show}`);
      }
    }
    // The 5x retype first (docs/change-control.md), then: above what binds the plan's accounts now (its value, else the own standing one): a raise.
    const binding = planBinding(previous, own);
    if (preview.applied > binding) {
      const show = (v: number) => (target.kind === "ceiling" ? formatCount(v) : formatMoney(v, target.budget.currency));
      requireApproval(p.changeControl, `${plan.key} on ${nameOf(target)} ${show(binding)} → ${show(preview.applied)}`, {
        kind: "plan.value",
        change: { planKey: plan.key, ...targetRef(target), value: preview.applied },
      });
    }
    const typed = { rawInput: p.input, typed: preview.typed, clamped: preview.clamped };
    await writePlanValue({ ...c, details: controlDetails(p.changeControl) }, plan, target, preview.applied, previous, typed);
    return {
      planKey: plan.key,
      on: nameOf(target),
      previous,
      applied: preview.applied,
      typed: preview.typed,
      clamped: preview.clamped,
      own: own.value,
      currency: target.kind === "budget" ? target.budget.currency : null,
    };
  });
}

/** Returns the plan's accounts to the ceiling's or budget's own value there. */
export async function removePlanValue(db: Db, p: RemovePlanValueParams): Promise<PlanValueResult> {
  const planKey = parsePlanKey(p.planKey);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const target = await lockTarget(tx, p.target);
    const plan = await lockedPlan(tx, planKey);
    const c: PlanChange = { tx, actor: p.actor, reason, details: controlDetails(p.changeControl) };
    // Removing a value is a raise when the own value is larger: the same retype rule as setting one.
    const current = await valueOf(tx, plan, target);
    const ownRow = target.kind === "ceiling" ? target.ceiling : target.budget;
    if (current !== null) {
      const raise = removalRaise(current, ownRow.value, ownRow.valueBeforeKill);
      const of: PlanValueKind = target.kind === "ceiling" ? { kind: "count" } : { kind: "money", currency: target.budget.currency };
      const confirm = parsePlanValue(p.confirm ?? "", of);
      if (raise.needsConfirmation && !(confirm.ok && confirm.value === raise.to)) {
        const show = (v: number) => (target.kind === "ceiling" ? formatCount(v) : formatMoney(v, target.budget.currency));
        throw new CatalogError(
          "confirmation_required",
          `removing ${plan.key}'s value raises its accounts on ${nameOf(target)} from ${show(current)} to ${show(raise.to)}, ${CONFIRM_RAISE_FACTOR}x or more: the confirmation must be exactly ${show(raise.to)}`,
        );
      }
    }
    if (current !== null && planBinding(null, ownRow) > current) {
      requireApproval(p.changeControl, `removing ${plan.key}'s value on ${nameOf(target)} (its accounts get the own value, above the plan's)`, {
        kind: "plan.value",
        change: { planKey: plan.key, ...targetRef(target), value: null },
      });
    }
    const previous = await deletePlanValue(c, plan, target);
    const own = target.kind === "ceiling" ? target.ceiling.value : target.budget.value;
    return {
      planKey: plan.key,
      on: nameOf(target),
      previous,
      applied: null,
      typed: null,
      clamped: null,
      own,
      currency: target.kind === "budget" ? target.budget.currency : null,
    };
  });
}

const targetRef = (t: LockedTarget): { ceilingId: number } | { budgetKey: string } =>
  t.kind === "ceiling" ? { ceilingId: t.ceiling.id } : { budgetKey: t.budget.key };

export type LockedTarget = { kind: "ceiling"; ceiling: Ceiling; endpoint: Endpoint } | { kind: "budget"; budget: Budget };

export const nameOf = (t: LockedTarget) => (t.kind === "ceiling" ? ceilingName(t.endpoint, t.ceiling) : `budget ${t.budget.key}`);

/** The ceiling (its endpoint's lock) or the budget (every member's lock), FOR UPDATE; a global one is refused. */
export async function lockTarget(tx: Db, target: PlanTarget): Promise<LockedTarget> {
  if (isCeiling(target)) {
    const { ceiling, endpoint } = await lockCeiling(tx, target.ceilingId);
    if (ceiling.scope !== "caller") {
      throw new CatalogError(
        "not_per_caller",
        `${ceilingName(endpoint, ceiling)} is not per caller: a plan sets values on per-caller ceilings only (a ${ceiling.scope} ceiling counts no account)`,
      );
    }
    return { kind: "ceiling", ceiling, endpoint };
  }
  const { budget } = await lockedBudget(tx, target.budgetKey);
  if (budget.scope !== "account") throw new CatalogError("not_per_caller", `budget ${budget.key} is global: a plan sets values on per-account budgets only`);
  return { kind: "budget", budget };
}

export async function valueOf(tx: Db, plan: Plan, target: LockedTarget): Promise<number | null> {
  return planValueOf(tx, plan.id, (target.kind === "ceiling" ? target.ceiling : target.budget).limitId);
}

type Typed = { rawInput?: string | null; typed?: number; clamped?: Clamp };

/** Who a plan value's audit row names besides the plan: the ceiling on its endpoint, or the budget by key (its value in its currency). */
function onTarget(actor: PlanChange["actor"], target: LockedTarget) {
  if (target.kind === "ceiling") {
    const { ceiling, endpoint } = target;
    return { fields: auditOf(actor, endpoint, ceiling.id), details: { on: nameOf(target), ceilingValue: ceiling.value }, row: ceiling };
  }
  const { budget } = target;
  return {
    fields: {},
    details: { on: nameOf(target), budgetId: budget.id, budgetKey: budget.key, currency: budget.currency, budgetValue: budget.value },
    row: budget,
  };
}

/** Writes a plan's value on a locked per-caller ceiling or per-account budget (inside its bounds, or 0), with plan.value.set. */
export async function writePlanValue(
  p: PlanChange,
  plan: Plan,
  target: LockedTarget,
  value: number,
  previous: number | null,
  typed: Typed = {},
): Promise<void> {
  const on = onTarget(p.actor, target);
  await putPlanValue(p.tx, plan.id, on.row.limitId, value);
  await savePlan(p.tx, plan.id, {});
  await recordPlanChange(p, plan, {
    ...on.fields,
    action: "plan.value.set",
    rawInput: typed.rawInput ?? null,
    previousValue: previous,
    appliedValue: value,
    clamped: (typed.clamped ?? null) !== null,
    details: {
      ...on.details,
      bounds: { min: on.row.minValue, max: on.row.maxValue },
      typed: typed.typed ?? value,
      clampedTo: typed.clamped ?? null,
    },
  });
}

/** Removes a plan's value on a locked limit, with plan.value.remove; returns the value it had. */
export async function deletePlanValue(p: PlanChange, plan: Plan, target: LockedTarget): Promise<number> {
  const on = onTarget(p.actor, target);
  const removed = await dropPlanValue(p.tx, plan.id, on.row.limitId);
  if (removed === null) throw new CatalogError("not_found", `plan ${plan.key} sets no value on ${nameOf(target)}`);
  await savePlan(p.tx, plan.id, {});
  await recordPlanChange(p, plan, {
    ...on.fields,
    action: "plan.value.remove",
    previousValue: removed,
    appliedValue: null,
    clamped: false,
    details: on.details,
  });
  return removed;
}
