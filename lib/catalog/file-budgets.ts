import type { Budget } from "@/db/schema";
import { CONFIRM_RAISE_FACTOR } from "@/lib/limits/parse";
import type { EndpointPlan, PlannedChange } from "@/lib/catalog/file";
import { requireApproval } from "@/lib/control/context";
import { isValueRaise } from "@/lib/control/raise";
import { formatMoney } from "@/lib/format";
import { archiveLocked } from "@/lib/budgets/archive";
import { deleteOverride, writeOverride } from "@/lib/budgets/overrides";
import { insertBudget } from "@/lib/budgets/create";
import { killLocked, restoreLocked } from "@/lib/budgets/kill";
import { updateBudgetFields } from "@/lib/budgets/update";
import { budgetSentence } from "@/lib/budgets/money";
import { type CatalogBudget, isKilled } from "@/lib/budgets/read";
import type { BudgetFields, BudgetOverride, BudgetSpec } from "@/lib/budgets/spec";
import { type BudgetChange, lockedBudget, saveBudget, recordBudgetChange } from "@/lib/budgets/write";
import { hasEnded, sameEnd, untilText } from "@/lib/control/ends";

// A catalog file's budgets: `plan` compares them with the database change by change, with the
// money worst case before and after; `apply` makes exactly those changes inside the catalog's one
// transaction, through the same writes, locks and audit events as the dashboard. A file that has a
// `budgets` list lists every budget: one missing is an error, never a delete (archive it).
// Key, currency, scope, window and billing day never change: they say what the counters count.

type FileEndpoint = { key: string; currency: string; archived: boolean };

/** What a budget's value and kill become under a file's spec; a kill changes only by an explicit field. */
type NextValue = { value: number; valueBeforeKill: number | null };

function nextValue(row: Budget, spec: BudgetSpec): NextValue {
  const wantKilled = spec.killed ?? isKilled(row);
  if (wantKilled && spec.value > 0) return { value: 0, valueBeforeKill: spec.value };
  // Typing 0 is a kill: remember the value in force for restore.
  if (spec.value === 0 && row.value > 0) return { value: 0, valueBeforeKill: row.value };
  return { value: spec.value, valueBeforeKill: spec.value === 0 ? row.valueBeforeKill : null };
}

export type BudgetStep = {
  spec: BudgetSpec;
  existing: CatalogBudget | null;
  fields: boolean;
  value: NextValue | null;
  overrides: { set: { o: BudgetOverride; had: number | null }[]; remove: BudgetOverride[] };
  archive: boolean | null;
};

const IMMUTABLE = [
  ["currency", "currency"],
  ["scope", "scope"],
  ["window", "window"],
  ["billingDay", "billing day"],
] as const;

function raise(before: number, after: number): boolean {
  return after > before && (before === 0 || after >= before * CONFIRM_RAISE_FACTOR);
}

function fieldsOf(spec: BudgetSpec): BudgetFields {
  return { name: spec.name, members: spec.members, min: spec.min, max: spec.max, default: spec.default, alertThresholds: spec.alertThresholds };
}

/**
 * Compares a file's budgets with those in the database. `endpoints` are the file's endpoints (the
 * catalog they will be after apply); `created` the endpoint keys the file creates.
 */
export function diffBudgets(
  wanted: readonly BudgetSpec[] | undefined,
  current: readonly CatalogBudget[],
  endpoints: readonly FileEndpoint[],
  created: ReadonlySet<string>,
): { plans: EndpointPlan[]; steps: BudgetStep[]; errors: string[] } {
  if (wanted === undefined) return { plans: [], steps: [], errors: [] };
  const errors: string[] = [];
  const byKey = new Map(current.map((b) => [b.budget.key, b]));
  const listed = new Set(wanted.map((b) => b.key));
  for (const b of current) {
    if (!listed.has(b.budget.key))
      errors.push(
        `budgets: '${b.budget.key}' is in the database but not in the file; list it (with "archived": true to archive it): nothing is ever deleted by a file`,
      );
  }
  const archivedInFile = new Set(endpoints.filter((e) => e.archived).map((e) => e.key));
  const plans: EndpointPlan[] = [];
  const steps: BudgetStep[] = [];
  wanted.forEach((spec, i) => {
    const existing = byKey.get(spec.key) ?? null;
    const money = (m: number | null) => (m === null ? "none" : formatMoney(m, spec.currency));
    // An archived endpoint may stay a member, or be one of a budget the file creates together with
    // it (export then apply on a fresh database); it may not join a live budget anew.
    const had = new Set(existing?.spec.members ?? []);
    spec.members.forEach((m, j) => {
      if (archivedInFile.has(m) && !had.has(m) && !created.has(m))
        errors.push(`budgets[${i}].members[${j}]: endpoint '${m}' is archived: it refuses every call and cannot join a budget`);
    });
    const changes: PlannedChange[] = [];
    const add = (action: string, lines: string[], needsConfirmation = false) => changes.push({ action, endpointKey: spec.key, lines, needsConfirmation });
    const step: BudgetStep = { spec, existing, fields: false, value: null, overrides: { set: [], remove: [] }, archive: null };
    if (!existing) {
      add(
        "budget.create",
        [
          `+ new budget ${spec.key} (${spec.name}), ${spec.scope}${spec.archived ? ", archived" : ""}${spec.killed && spec.value > 0 ? `, killed (restores to ${money(spec.value)})` : ""}`,
        ],
        raise(spec.default, spec.value),
      );
    } else {
      const row = existing.budget;
      for (const [field, label] of IMMUTABLE) {
        if (existing.spec[field] !== spec[field])
          errors.push(
            `budgets[${i}].${field}: a budget's ${label} cannot change (${String(existing.spec[field])} → ${String(spec[field])}): archive it and add another under a new key`,
          );
      }
      const lines: string[] = [];
      if (row.name !== spec.name) lines.push(`~ name: ${JSON.stringify(row.name)} → ${JSON.stringify(spec.name)}`);
      const gained = spec.members.filter((m) => !had.has(m));
      const lost = existing.spec.members.filter((m) => !spec.members.includes(m));
      if (gained.length || lost.length) lines.push(`~ members: ${[...gained.map((m) => `+ ${m}`), ...lost.map((m) => `- ${m}`)].join(", ")}`);
      if (row.minValue !== spec.min || row.maxValue !== spec.max)
        lines.push(`~ bounds [${money(row.minValue)}, ${money(row.maxValue)}] → [${money(spec.min)}, ${money(spec.max)}]`);
      if (row.defaultValue !== spec.default) lines.push(`~ default ${money(row.defaultValue)} → ${money(spec.default)}`);
      const thresholds = [...row.alertThresholds].sort((a, b) => a - b);
      if (thresholds.join(",") !== spec.alertThresholds.join(","))
        lines.push(`~ alert thresholds ${thresholds.join("/")}% → ${spec.alertThresholds.join("/")}%`);
      if (lines.length > 0) {
        step.fields = true;
        add("budget.update", lines);
      }
      const next = nextValue(row, spec);
      if (next.value !== row.value || next.valueBeforeKill !== row.valueBeforeKill) {
        step.value = next;
        const base = row.value > 0 ? row.value : (row.valueBeforeKill ?? 0);
        const after = next.value > 0 ? next.value : (next.valueBeforeKill ?? 0);
        if (row.value > 0 && next.value === 0) add("budget.kill", [`~ killed (value ${money(row.value)}; restores to ${money(next.valueBeforeKill)})`]);
        else if (row.value === 0 && next.value > 0) add("budget.restore", [`~ kill lifted: restored to ${money(next.value)}`], raise(base, after));
        else if (row.value !== next.value) add("budget.adjust", [`~ value ${money(row.value)} → ${money(next.value)}`], raise(base, after));
        else add("budget.update", [`~ value to restore ${money(row.valueBeforeKill)} → ${money(next.valueBeforeKill)}`], raise(base, after));
      }
      const inDb = new Map(existing.spec.overrides.map((o) => [o.caller, o]));
      // One the file says ended (until past) is no override: it binds nothing.
      const wanted = spec.overrides.filter((o) => !hasEnded(o.until));
      const inFile = new Set(wanted.map((o) => o.caller));
      for (const o of wanted) {
        const was = inDb.get(o.caller);
        if (was && was.value === o.value && sameEnd(was.until, o.until)) continue;
        step.overrides.set.push({ o, had: was?.value ?? null });
        add("budget.override.set", [
          `~ override ${o.caller}: ${was ? money(was.value) + untilText(was.until) : money(null)} → ${money(o.value)}${untilText(o.until)}`,
        ]);
      }
      for (const o of existing.spec.overrides) {
        if (inFile.has(o.caller)) continue;
        step.overrides.remove.push(o);
        add("budget.override.remove", [`- override ${o.caller} (${money(o.value)}${untilText(o.until)})`]);
      }
      if (spec.archived !== existing.spec.archived) {
        step.archive = spec.archived;
        add(spec.archived ? "budget.archive" : "budget.unarchive", [
          spec.archived ? "archive: it charges and refuses nothing" : "unarchive: it charges and refuses again",
        ]);
      }
    }
    if (changes.length === 0) return;
    steps.push(step);
    const live = (s: Pick<BudgetSpec, "value" | "killed">) => (s.killed ? 0 : s.value);
    const before = existing ? budgetSentence({ ...existing.spec, value: existing.budget.value }) : "(new)";
    // Members in key order on both sides, so only a real change reads as one.
    const after = budgetSentence({
      ...spec,
      members: [...spec.members].sort(),
      value: step.value ? step.value.value : existing ? existing.budget.value : live(spec),
    });
    plans.push({ key: `budget ${spec.key}`, changes, worstCase: [`worst case: ${before} → ${after}`] });
  });
  return { plans, steps, errors };
}

/** Makes a plan's budget steps, inside the catalog file's transaction, after its endpoints. */
export async function applyBudgetSteps(p: BudgetChange, steps: readonly BudgetStep[], created: ReadonlySet<string>): Promise<void> {
  // New budgets last: one the file archives is then archived when a new one is compared with it
  // (a budget re-created looser within 24 hours is a raise: lib/budgets/re-add.ts).
  for (const step of steps.filter((s) => s.existing !== null)) {
    const { spec } = step;
    if (step.fields) await updateBudgetFields(p, spec.key, fieldsOf(spec), { mayBeArchived: created });
    // Read again under the locks: new bounds may have pulled the value in.
    const { budget } = await lockedBudget(p.tx, spec.key);
    if (step.value) await applyValue(p, budget, step.value);
    for (const { o } of step.overrides.set)
      await writeOverride(p, (await lockedBudget(p.tx, spec.key)).budget, { ...o, expiresAt: o.until === undefined ? null : new Date(o.until) });
    for (const o of step.overrides.remove) await deleteOverride(p, budget, o.caller);
    if (step.archive !== null) await archiveLocked(p, (await lockedBudget(p.tx, spec.key)).budget, step.archive);
  }
  for (const step of steps.filter((s) => s.existing === null)) await insertBudget(p, step.spec, created);
}

async function applyValue(p: BudgetChange, budget: Budget, next: NextValue): Promise<void> {
  // A raise (the value, or the value a kill in the file restores to) needs a second admin.
  const after = next.value > 0 ? next.value : (next.valueBeforeKill ?? 0);
  if (isValueRaise(budget, after)) {
    requireApproval(p.changeControl, `budget ${budget.key} ${formatMoney(budget.value, budget.currency)} → ${formatMoney(after, budget.currency)}`, {
      kind: "budget.value",
      change: { budgetKey: budget.key, value: after },
    });
  }
  if (budget.value > 0 && next.value === 0) return killLocked(p, budget, next.valueBeforeKill ?? budget.value);
  if (budget.value === 0 && next.value > 0) return restoreLocked(p, budget, next.value);
  if (budget.value === next.value && budget.valueBeforeKill === next.valueBeforeKill) return;
  await saveBudget(p.tx, budget.id, { value: next.value, valueBeforeKill: next.valueBeforeKill });
  await recordBudgetChange(p, budget, {
    action: budget.value !== next.value ? "budget.adjust" : "budget.update",
    previousValue: budget.value,
    appliedValue: next.value,
    clamped: false,
    details:
      budget.value !== next.value
        ? { kind: next.value > budget.value ? "raise" : "lower" }
        : { changes: { valueBeforeKill: { before: budget.valueBeforeKill, after: next.valueBeforeKill } } },
  });
}
