import { and, asc, eq } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings, endpoints, planLimitValues, plans, type Plan } from "@/db/schema";
import type { EndpointPlan, PlannedChange } from "@/lib/catalog/file";
import { lockedBudget } from "@/lib/budgets/write";
import { CONFIRM_RAISE_FACTOR } from "@/lib/limits/parse";
import { lockCeiling } from "@/lib/ceilings/lock";
import { formatCount, formatMoney } from "@/lib/format";
import type { FileRaise } from "@/lib/catalog/file-raises";
import { type ChangeControl, isChangeControl, requireApproval } from "@/lib/control/context";
import { defaultSwitchLoosening, insertPlan, makeDefaultLocked, updatePlanFields } from "@/lib/plans/change";
import { planCeilingId, type PlanBudgetValueSpec, type PlanCeilingValueSpec, type PlanSpec, type PlanSpecInput } from "@/lib/plans/spec";
import { deletePlanValue, planBinding, writePlanValue } from "@/lib/plans/values";
import { lockedPlan, lockPlanEndpoints, type PlanChange } from "@/lib/plans/write";

// A catalog file's plans: export writes them, `plan` compares them with the database change by
// change, `apply` makes exactly those changes inside the catalog's one transaction, after its
// endpoints and budgets (a plan may set a value on a ceiling or budget the same file creates),
// through the same writes, locks and audit events as the dashboard. A file with a `plans` list
// lists every plan: one missing is an error, never a delete. A value in a file is a definition,
// not an adjustment: outside the bounds it is an error, never clamped.

/** A plan as the database has it, in the file's terms. */
export type CatalogPlan = { plan: Plan; spec: PlanSpec };

export async function readPlanSpecs(db: Db): Promise<CatalogPlan[]> {
  const [rows, ceilingValues, budgetValues] = await Promise.all([
    db.select().from(plans).orderBy(asc(plans.key)),
    db
      .select({ planId: planLimitValues.planId, endpoint: endpoints.key, metric: ceilings.metric, window: ceilings.window, value: planLimitValues.value })
      .from(planLimitValues)
      .innerJoin(ceilings, eq(ceilings.limitId, planLimitValues.limitId))
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .orderBy(asc(endpoints.key), asc(ceilings.metric), asc(ceilings.window)),
    db
      .select({ planId: planLimitValues.planId, budget: budgets.key, value: planLimitValues.value })
      .from(planLimitValues)
      .innerJoin(budgets, eq(budgets.limitId, planLimitValues.limitId))
      .orderBy(asc(budgets.key)),
  ]);
  return rows.map((plan) => ({
    plan,
    spec: {
      key: plan.key,
      name: plan.name,
      description: plan.description,
      ...(plan.isDefault ? { default: true } : {}),
      ceilings: ceilingValues
        .filter((v) => v.planId === plan.id)
        // A per-caller ceiling's window is a day or a billing month (a cooldown is per destination).
        .flatMap(({ planId: _p, window, ...v }) => (window === "first_hit" ? [] : [{ ...v, window }])),
      budgets: budgetValues.filter((v) => v.planId === plan.id).map(({ planId: _p, ...v }) => v),
    },
  }));
}

/** The plans as export writes them. */
export async function exportPlans(db: Db): Promise<PlanSpecInput[]> {
  return (await readPlanSpecs(db)).map((p) => p.spec);
}

/** What a file's plans are checked against: the catalog as it will be once the file is applied. */
export type PlanTargets = {
  ceilings: readonly { endpoint: string; metric: string; scope: string; window: string; value: number; min: number; max: number }[];
  budgets: readonly { key: string; scope: string; currency: string; value: number; min: number; max: number }[];
};

export type PlanStep = {
  spec: PlanSpec;
  existing: CatalogPlan | null;
  fields: boolean;
  makeDefault: boolean;
  ceilings: { set: PlanCeilingValueSpec[]; remove: PlanCeilingValueSpec[] };
  budgets: { set: PlanBudgetValueSpec[]; remove: PlanBudgetValueSpec[] };
};

function raise(before: number, after: number): boolean {
  return after > before && (before === 0 || after >= before * CONFIRM_RAISE_FACTOR);
}

/** Compares a file's plans with those in the database: the changes, or the rules it breaks. */
export function diffPlans(
  wanted: readonly PlanSpec[] | undefined,
  current: readonly CatalogPlan[],
  targets: PlanTargets,
): { plans: EndpointPlan[]; steps: PlanStep[]; errors: string[] } {
  if (wanted === undefined) return { plans: [], steps: [], errors: [] };
  const errors: string[] = [];
  const listed = new Set(wanted.map((p) => p.key));
  for (const c of current) {
    if (!listed.has(c.plan.key))
      errors.push(
        `plans: '${c.plan.key}' is in the database but not in the file; list it: a file never deletes a plan (delete it with npm run ceilings -- plans delete)`,
      );
  }
  const ceilingOf = new Map(
    targets.ceilings.filter((c) => c.scope === "caller").map((c) => [planCeilingId({ endpoint: c.endpoint, metric: c.metric, window: c.window }), c]),
  );
  const budgetOf = new Map(targets.budgets.map((b) => [b.key, b]));
  const byKey = new Map(current.map((c) => [c.plan.key, c]));
  const plansOut: EndpointPlan[] = [];
  const steps: PlanStep[] = [];
  wanted.forEach((spec, i) => {
    spec.ceilings.forEach((v, j) => {
      const c = ceilingOf.get(planCeilingId(v));
      const at = `plans[${i}].ceilings[${j}]`;
      if (!c) errors.push(`${at}: ${v.endpoint} has no per-caller ceiling of ${v.metric} per ${v.window}: a plan sets values on per-caller ceilings only`);
      else if (v.value !== 0 && (v.value < c.min || v.value > c.max))
        errors.push(
          `${at}.value: ${formatCount(v.value)} must be between the ceiling's min (${formatCount(c.min)}) and max (${formatCount(c.max)}), or 0 to refuse the plan's accounts`,
        );
    });
    spec.budgets.forEach((v, j) => {
      const b = budgetOf.get(v.budget);
      const at = `plans[${i}].budgets[${j}]`;
      if (!b) errors.push(`${at}: no budget '${v.budget}'`);
      else if (b.scope !== "account") errors.push(`${at}: budget '${v.budget}' is global: a plan sets values on per-account budgets only`);
      else if (v.value !== 0 && (v.value < b.min || v.value > b.max))
        errors.push(
          `${at}.value: ${formatMoney(v.value, b.currency)} must be between the budget's min (${formatMoney(b.min, b.currency)}) and max (${formatMoney(b.max, b.currency)}), or 0`,
        );
    });
    const existing = byKey.get(spec.key) ?? null;
    const changes: PlannedChange[] = [];
    const add = (action: string, lines: string[], needsConfirmation = false) => changes.push({ action, endpointKey: spec.key, lines, needsConfirmation });
    // What `plan` marks as a raise (apply decides again under the locks, the default's looseness in the database).
    const approval = (is: boolean, line: string) => {
      const last = changes[changes.length - 1];
      if (is && last) last.needsApproval = [line];
    };
    const step: PlanStep = {
      spec,
      existing,
      fields: false,
      makeDefault: spec.default === true && !existing?.plan.isDefault,
      ceilings: { set: [], remove: [] },
      budgets: { set: [], remove: [] },
    };
    if (!existing) add("plan.create", [`+ new plan ${spec.key} (${spec.name})`]);
    else {
      const lines: string[] = [];
      if (existing.plan.name !== spec.name) lines.push(`~ name: ${JSON.stringify(existing.plan.name)} → ${JSON.stringify(spec.name)}`);
      if (existing.plan.description !== spec.description)
        lines.push(`~ description: ${JSON.stringify(existing.plan.description)} → ${JSON.stringify(spec.description)}`);
      if (lines.length > 0) {
        step.fields = true;
        add("plan.update", lines);
      }
    }
    const hadCeiling = new Map((existing?.spec.ceilings ?? []).map((v) => [planCeilingId(v), v.value]));
    for (const v of spec.ceilings) {
      const id = planCeilingId(v);
      const had = hadCeiling.get(id);
      if (had === v.value) continue;
      step.ceilings.set.push(v);
      const own = ceilingOf.get(id)?.value ?? 0;
      add(
        "plan.value.set",
        [`~ ${id}: ${had === undefined ? `none (the ceiling's ${formatCount(own)})` : formatCount(had)} → ${formatCount(v.value)}`],
        raise(had ?? own, v.value),
      );
      approval(v.value > (had ?? own), `plan ${spec.key} ${id}: ${formatCount(had ?? own)} → ${formatCount(v.value)}`);
    }
    const inFile = new Set(spec.ceilings.map(planCeilingId));
    for (const v of existing?.spec.ceilings ?? []) {
      if (inFile.has(planCeilingId(v))) continue;
      step.ceilings.remove.push(v);
      add(
        "plan.value.remove",
        [`- ${planCeilingId(v)} (${formatCount(v.value)}): the ceiling's own value binds`],
        raise(v.value, ceilingOf.get(planCeilingId(v))?.value ?? 0),
      );
      approval((ceilingOf.get(planCeilingId(v))?.value ?? 0) > v.value, `plan ${spec.key} ${planCeilingId(v)}: removed, the own value is higher`);
    }
    const hadBudget = new Map((existing?.spec.budgets ?? []).map((v) => [v.budget, v.value]));
    for (const v of spec.budgets) {
      const had = hadBudget.get(v.budget);
      if (had === v.value) continue;
      step.budgets.set.push(v);
      const b = budgetOf.get(v.budget);
      const money = (m: number) => formatMoney(m, b?.currency ?? "USD");
      add(
        "plan.value.set",
        [`~ budget ${v.budget}: ${had === undefined ? `none (the budget's ${money(b?.value ?? 0)})` : money(had)} → ${money(v.value)}`],
        raise(had ?? b?.value ?? 0, v.value),
      );
      approval(v.value > (had ?? b?.value ?? 0), `plan ${spec.key} budget ${v.budget}: ${money(had ?? b?.value ?? 0)} → ${money(v.value)}`);
    }
    const inFileBudgets = new Set(spec.budgets.map((v) => v.budget));
    for (const v of existing?.spec.budgets ?? []) {
      if (inFileBudgets.has(v.budget)) continue;
      step.budgets.remove.push(v);
      const b = budgetOf.get(v.budget);
      add(
        "plan.value.remove",
        [`- budget ${v.budget} (${formatMoney(v.value, b?.currency ?? "USD")}): the budget's own value binds`],
        raise(v.value, b?.value ?? 0),
      );
      approval((b?.value ?? 0) > v.value, `plan ${spec.key} budget ${v.budget}: removed, the own value is higher`);
    }
    if (step.makeDefault) {
      add("plan.default", [`~ the default plan: every account not assigned a plan is on ${spec.key} from the next reservation`]);
      approval(true, `the default plan → ${spec.key}: a raise if it is looser (decided by the database when applied)`);
    }
    if (changes.length === 0) return;
    steps.push(step);
    plansOut.push({ key: `plan ${spec.key}`, changes, worstCase: [] });
  });
  return { plans: plansOut, steps, errors };
}

/**
 * Makes a plan's steps inside the catalog file's transaction, after its endpoints and budgets.
 * Change control: a value above what binds the plan's accounts (its value, else the own standing
 * one), a removal below the own value, or the default switched to a looser plan (the database's
 * reading, after the file's values are written) is a raise. Under `changeControl` it is written;
 * with `defer` (apply asks for the file's raises) it is left as it is and returned, to be asked
 * for with the file's other raises; otherwise it is refused (approval_required) and nothing of the
 * file is made.
 */
export async function applyPlanSteps(p: PlanChange & { changeControl?: ChangeControl }, steps: readonly PlanStep[], defer = false): Promise<FileRaise[]> {
  const raises: FileRaise[] = [];
  const allowed = isChangeControl(p.changeControl);
  /** True: write it; false: left for a change request. */
  const mayWrite = (raise: FileRaise): boolean => {
    if (allowed) return true;
    if (!defer) requireApproval(p.changeControl, `the file's ${raise.line}`, { kind: raise.kind, change: raiseChange(raise) });
    raises.push(raise);
    return false;
  };
  for (const step of steps) {
    const { spec } = step;
    let plan = step.existing ? await lockedPlan(p.tx, spec.key) : await insertPlan(p, { key: spec.key, name: spec.name, description: spec.description });
    if (step.fields) await updatePlanFields(p, plan, { name: spec.name, description: spec.description });
    const had = new Map((step.existing?.spec.ceilings ?? []).map((v) => [planCeilingId(v), v.value]));
    for (const v of step.ceilings.set) {
      const target = await lockedCeiling(p.tx, v);
      if (!target) throw new Error(`no per-caller ceiling ${planCeilingId(v)} after the endpoints were applied`);
      const before = planBinding(had.get(planCeilingId(v)) ?? null, target.ceiling);
      const line = `plan ${spec.key} ${planCeilingId(v)}: ${formatCount(before)} → ${formatCount(v.value)}`;
      if (v.value > before && !mayWrite({ kind: "plan.value", planKey: spec.key, ceilingId: target.ceiling.id, value: v.value, line })) continue;
      plan = await lockedPlan(p.tx, spec.key);
      await writePlanValue(p, plan, { kind: "ceiling", ...target }, v.value, had.get(planCeilingId(v)) ?? null);
    }
    for (const v of step.ceilings.remove) {
      // A ceiling the same file removed took its plan values with it.
      const target = await lockedCeiling(p.tx, v);
      if (!target) continue;
      const own = planBinding(null, target.ceiling);
      const line = `plan ${spec.key} ${planCeilingId(v)}: ${formatCount(v.value)} removed, the own ${formatCount(own)} binds`;
      if (own > v.value && !mayWrite({ kind: "plan.value", planKey: spec.key, ceilingId: target.ceiling.id, value: null, line })) continue;
      await deletePlanValue(p, await lockedPlan(p.tx, spec.key), { kind: "ceiling", ...target });
    }
    const hadBudget = new Map((step.existing?.spec.budgets ?? []).map((v) => [v.budget, v.value]));
    for (const v of step.budgets.set) {
      const { budget } = await lockedBudget(p.tx, v.budget);
      const before = planBinding(hadBudget.get(v.budget) ?? null, budget);
      const line = `plan ${spec.key} budget ${v.budget}: ${formatMoney(before, budget.currency)} → ${formatMoney(v.value, budget.currency)}`;
      if (v.value > before && !mayWrite({ kind: "plan.value", planKey: spec.key, budgetKey: v.budget, value: v.value, line })) continue;
      await writePlanValue(p, await lockedPlan(p.tx, spec.key), { kind: "budget", budget }, v.value, hadBudget.get(v.budget) ?? null);
    }
    for (const v of step.budgets.remove) {
      const { budget } = await lockedBudget(p.tx, v.budget);
      const own = planBinding(null, budget);
      const line = `plan ${spec.key} budget ${v.budget}: ${formatMoney(v.value, budget.currency)} removed, the own ${formatMoney(own, budget.currency)} binds`;
      if (own > v.value && !mayWrite({ kind: "plan.value", planKey: spec.key, budgetKey: v.budget, value: null, line })) continue;
      await deletePlanValue(p, await lockedPlan(p.tx, spec.key), { kind: "budget", budget });
    }
    if (step.makeDefault) {
      await lockPlanEndpoints(p.tx);
      plan = await lockedPlan(p.tx, spec.key);
      // Read after the file's values: the switch is looser or not against what the file leaves in force.
      const loose = await defaultSwitchLoosening(p.tx, plan);
      if (
        loose.length > 0 &&
        !mayWrite({ kind: "plan.default", planKey: spec.key, line: `the default plan → ${spec.key} (looser on ${loose.length} limit(s))` })
      )
        continue;
      await makeDefaultLocked(p, plan, p.changeControl);
    }
  }
  return raises;
}

/** A plan raise as lib/changes takes it. */
export function raiseChange(raise: FileRaise): Record<string, unknown> {
  if (raise.kind === "plan.value")
    return { planKey: raise.planKey, ...(raise.ceilingId !== undefined ? { ceilingId: raise.ceilingId } : { budgetKey: raise.budgetKey }), value: raise.value };
  if (raise.kind === "plan.default") return { planKey: raise.planKey };
  throw new Error(`not a plan raise: ${raise.kind}`);
}

async function lockedCeiling(tx: Db, v: PlanCeilingValueSpec) {
  const [row] = await tx
    .select({ id: ceilings.id })
    .from(ceilings)
    .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
    .where(and(eq(endpoints.key, v.endpoint), eq(ceilings.scope, "caller"), eq(ceilings.metric, v.metric), eq(ceilings.window, v.window)));
  return row ? lockCeiling(tx, row.id) : null;
}
