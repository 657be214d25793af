import type { Ceiling } from "@/db/schema";
import { type CatalogBudget, isKilled } from "@/lib/budgets/read";
import type { BudgetSpec } from "@/lib/budgets/spec";
import { loweredPrices } from "@/lib/control/raise";
import { formatCount, formatMoney } from "@/lib/format";
import type { EndpointPart } from "@/lib/vocabulary";
import { isBillingDayRaise } from "./billing-day";
import type { CatalogEndpoint } from "./read";
import { type CatalogFile, type CeilingSpec, ceilingIdentity, type EndpointSpec, hasGlobalCeiling } from "./spec";

// Change control for a catalog file (docs/change-control.md, "Command line"): lowering spend takes
// one person, raising it takes two. `withholdRaises` splits a file into the file without its raises
// (what `apply` makes at once, as before) and the raises, each one change request of lib/changes.
// A raise is what the dashboard would ask for: a value or a max above the one in force (a killed
// one counts from its value before the kill), a larger per-call max, a new ceiling or budget whose
// value is above its default, an unarchive, a new billing day on an endpoint with a billing_month
// ceiling. Pure: the caller reads the catalog (and what was removed lately) under its locks.

/** One raise the file asks for. New endpoints and budgets are named by key: their ids exist after apply. */
export type FileRaise =
  | { kind: "ceiling.value"; endpointKey: string; identity: string; value: number; line: string }
  | { kind: "ceiling.bounds"; endpointKey: string; identity: string; min: number; max: number; line: string }
  | { kind: "ceiling.add"; endpointKey: string; ceiling: CeilingSpec; line: string }
  | { kind: "endpoint.per_call_max"; endpointKey: string; perCallMax: number; line: string }
  | { kind: "endpoint.unarchive"; endpointKey: string; line: string }
  | { kind: "budget.value"; budgetKey: string; value: number; line: string }
  | { kind: "budget.bounds"; budgetKey: string; min: number; max: number; line: string }
  | { kind: "budget.unarchive"; budgetKey: string; line: string }
  | { kind: "budget.create"; budgetKey: string; spec: BudgetSpec; line: string }
  // A plan's value above what binds its accounts (or removed below the own value), and the default
  // switched to a looser plan (the database's reading): found while the plans are applied, under
  // their locks, and asked for like the rest (lib/catalog/file-plans.ts applyPlanSteps).
  | { kind: "plan.value"; planKey: string; ceilingId?: number; budgetKey?: string; value: number | null; line: string }
  | { kind: "plan.default"; planKey: string; line: string }
  | { kind: "budget.members"; budgetKey: string; members: string[]; line: string }
  | { kind: "budget.archive"; budgetKey: string; line: string }
  | { kind: "endpoint.prices"; endpointKey: string; parts: EndpointPart[]; line: string }
  | { kind: "endpoint.billing_day"; endpointKey: string; billingDay: number; line: string };

/**
 * What the database decided before the split (it owns "looser"): the keys of the file's new budgets
 * that are looser than a budget archived in the last 24 hours (or by this file) over the same members.
 */
export type FileLooseness = {
  looserNewBudgets: ReadonlySet<string>;
  /** The budgets the file archives while a looser one created in the last 24 hours shares their members (by key, with that one's key). */
  archivesLoosening?: ReadonlyMap<string, string>;
  /** Each endpoint's parts removed in the last 24 hours, by endpoint key (lib/catalog/re-add.ts recentlyRemovedParts). */
  removedParts?: ReadonlyMap<string, readonly EndpointPart[]>;
};

export type Withheld = { file: CatalogFile; raises: FileRaise[]; errors: string[] };

/**
 * The value a ceiling or budget row stands for: in force, or the one a restore puts back when killed
 * (its default when it has none), as lib/changes isValueRaise counts it.
 */
export function standingValue(row: { value: number; valueBeforeKill: number | null; defaultValue: number }): number {
  return row.value > 0 ? row.value : (row.valueBeforeKill ?? row.defaultValue);
}

const clamp = (v: number, min: number, max: number) => Math.min(Math.max(v, min), max);

/**
 * A ceiling row under a file's spec: whether its value (counted from the value before a kill) or its
 * max goes up. `after` is the standing value the file asks for.
 */
export function ceilingRaise(
  row: Pick<Ceiling, "value" | "valueBeforeKill" | "maxValue" | "defaultValue">,
  spec: Pick<CeilingSpec, "value" | "max" | "killed">,
): { value: boolean; max: boolean; after: number; staysKilled: boolean } {
  const killedNow = row.value === 0 && row.valueBeforeKill !== null;
  const staysKilled = spec.value === 0 || (spec.killed ?? killedNow);
  // Typing 0 is a kill: the standing value stays the one in force.
  const after = spec.value === 0 ? standingValue(row) : spec.value;
  return { value: after > standingValue(row), max: spec.max > row.maxValue, after, staysKilled };
}

/** The same for a budget row. */
export function budgetRaise(
  row: CatalogBudget["budget"],
  spec: Pick<BudgetSpec, "value" | "max" | "killed" | "archived">,
): { value: boolean; max: boolean; after: number; staysKilled: boolean; unarchive: boolean } {
  const staysKilled = spec.value === 0 || (spec.killed ?? isKilled(row));
  const after = spec.value === 0 ? standingValue(row) : spec.value;
  return { value: after > standingValue(row), max: spec.max > row.maxValue, after, staysKilled, unarchive: row.archivedAt !== null && !spec.archived };
}

/** A new ceiling or budget asks for approval when its value is above its default. */
export const newAboveDefault = (spec: { value: number; default: number }) => spec.value > spec.default;

const KILLED_RAISE =
  "stays killed with a value to restore above the one in force: an approval puts a value in force, so a raise cannot wait behind a kill; lift the kill in the file (it is then asked for) or keep the value to restore";

export function withholdRaises(
  file: CatalogFile,
  current: readonly CatalogEndpoint[],
  budgets: readonly CatalogBudget[],
  looseness: FileLooseness = { looserNewBudgets: new Set() },
): Withheld {
  const raises: FileRaise[] = [];
  const errors: string[] = [];
  const byKey = new Map(current.map((c) => [c.endpoint.key, c]));
  const endpoints = file.endpoints.map((spec): EndpointSpec => {
    const existing = byKey.get(spec.key);
    if (!existing) return newEndpoint(spec, raises, errors);
    const e = existing.endpoint;
    const out: EndpointSpec = { ...spec };
    if (spec.perCallMax > e.perCallMax) {
      out.perCallMax = e.perCallMax;
      raises.push({
        kind: "endpoint.per_call_max",
        endpointKey: spec.key,
        perCallMax: spec.perCallMax,
        line: `${spec.key}: per-call max ${formatCount(e.perCallMax)} → ${formatCount(spec.perCallMax)}`,
      });
    }
    if (e.archivedAt !== null && !spec.archived) {
      out.archived = true;
      raises.push({ kind: "endpoint.unarchive", endpointKey: spec.key, line: `${spec.key}: unarchive` });
    }
    // A price lowered where a budget that stays live charges the endpoint: the prices in force stay, the file's are asked for.
    const lowered = loweredPrices(e.parts, spec.parts, looseness.removedParts?.get(spec.key) ?? []);
    const charging = budgets.filter(
      (b) => b.budget.archivedAt === null && b.spec.members.includes(spec.key) && !file.budgets?.some((f) => f.key === b.budget.key && f.archived),
    );
    if (lowered.length > 0 && charging.length > 0) {
      out.parts = e.parts.map((p) => ({ name: p.name, pricePico: p.pricePico }));
      raises.push({
        kind: "endpoint.prices",
        endpointKey: spec.key,
        parts: spec.parts,
        line: `${spec.key}: prices lowered (${lowered.join("; ")}), charged by budget ${charging.map((b) => b.budget.key).join(", ")}`,
      });
    }
    // A new billing day restarts the month of the billing_month ceilings in force (lib/catalog/billing-day.ts).
    if (isBillingDayRaise(existing.ceilings, e.billingDay, spec.billingDay)) {
      out.billingDay = e.billingDay;
      raises.push({
        kind: "endpoint.billing_day",
        endpointKey: spec.key,
        billingDay: spec.billingDay,
        line: `${spec.key}: billing day ${e.billingDay} → ${spec.billingDay} (a new billing month for its billing_month ceilings: what they counted is forgiven)`,
      });
    }
    const rows = new Map(existing.ceilings.map((c) => [ceilingIdentity(c), c]));
    const withheldAdds: CeilingSpec[] = [];
    out.ceilings = spec.ceilings.flatMap((c) => {
      const identity = ceilingIdentity(c);
      const row = rows.get(identity);
      const at = `${spec.key} ${identity}`;
      if (!row) {
        if (!newAboveDefault(c)) return [c];
        // Killed or not: the request carries the spec, and its approval adds the ceiling as it is.
        withheldAdds.push(c);
        raises.push({
          kind: "ceiling.add",
          endpointKey: spec.key,
          ceiling: c,
          line: `${at}: new ceiling at ${formatCount(c.value)} (its default ${formatCount(c.default)})`,
        });
        return [];
      }
      return [withholdCeiling(spec.key, row, c, raises, errors)];
    });
    for (const c of withheldAdds) {
      const o = spec.overrides.find((x) => c.scope === "caller" && x.metric === c.metric && x.window === c.window);
      if (o)
        errors.push(
          `${spec.key} override ${o.metric}/${o.window}/${o.caller}: its ceiling ${ceilingIdentity(c)} is new and needs approval first: apply the file without the override, then again once the ceiling is approved`,
        );
    }
    if (withheldAdds.length > 0 && !hasGlobalCeiling(out.ceilings)) {
      errors.push(`${spec.key}: its only global ceiling would be the new one waiting for approval: keep a global ceiling in force until it is approved`);
    }
    return out;
  });
  const tamedBudgets = file.budgets?.flatMap((spec) => {
    const existing = budgets.find((b) => b.budget.key === spec.key);
    if (!existing) return newBudget(spec, raises, errors, looseness.looserNewBudgets.has(spec.key));
    const looser = looseness.archivesLoosening?.get(spec.key);
    if (looser !== undefined && spec.archived && existing.budget.archivedAt === null) {
      raises.push({
        kind: "budget.archive",
        budgetKey: spec.key,
        line: `budget ${spec.key}: archive while ${looser}, created in the last 24 hours over the same members, lets more through`,
      });
      return [withholdBudget(existing, { ...spec, archived: false }, raises, errors)];
    }
    return [withholdBudget(existing, spec, raises, errors)];
  });
  return { file: { ...file, endpoints, ...(tamedBudgets ? { budgets: tamedBudgets } : {}) }, raises, errors };
}

/** A new endpoint is created at once; a ceiling above its default starts at its default and its value is asked for. */
function newEndpoint(spec: EndpointSpec, raises: FileRaise[], errors: string[]): EndpointSpec {
  return {
    ...spec,
    ceilings: spec.ceilings.map((c) => {
      if (!newAboveDefault(c)) return c;
      const identity = ceilingIdentity(c);
      if (c.killed) {
        errors.push(`${spec.key} ${identity}: new, killed, with a value to restore above its default: ${KILLED_RAISE}`);
        return c;
      }
      raises.push({
        kind: "ceiling.value",
        endpointKey: spec.key,
        identity,
        value: c.value,
        line: `${spec.key} ${identity}: new, created at its default ${formatCount(c.default)}; value → ${formatCount(c.value)}`,
      });
      return { ...c, value: c.default };
    }),
  };
}

const DEFAULT_RAISE =
  "is at 0 with nothing to restore, so a restore puts its default back: raising that default is a raise, and there is no request for a default; keep the default and ask for the value instead";

function withholdCeiling(endpointKey: string, row: Ceiling, c: CeilingSpec, raises: FileRaise[], errors: string[]): CeilingSpec {
  // At 0 with nothing remembered, the default is the standing value (what a restore brings back).
  if (c.value === 0 && row.value === 0 && row.valueBeforeKill === null && c.default > standingValue(row)) {
    errors.push(`${endpointKey} #${row.id} ${ceilingIdentity(c)}: default ${formatCount(row.defaultValue)} → ${formatCount(c.default)} ${DEFAULT_RAISE}`);
    return c;
  }
  const r = ceilingRaise(row, c);
  if (!r.value && !r.max) return c;
  const identity = ceilingIdentity(c);
  const at = `${endpointKey} #${row.id} ${identity}`;
  const out = { ...c };
  // A value above the max in force cannot be asked for yet (a request's value is clamped into the
  // bounds in force): it waits for the bounds, and the file applied again asks for it.
  const valueWaits = r.value && r.max && r.after > row.maxValue;
  if (r.max) {
    out.max = row.maxValue;
    const then = valueWaits ? `; value ${formatCount(r.after)} is asked for once these are approved: apply the file again` : "";
    raises.push({
      kind: "ceiling.bounds",
      endpointKey,
      identity,
      min: c.min,
      max: c.max,
      line: `${at}: bounds [${formatCount(row.minValue)}, ${formatCount(row.maxValue)}] → [${formatCount(c.min)}, ${formatCount(c.max)}]${then}`,
    });
  }
  if (r.value) {
    if (r.staysKilled) {
      errors.push(`${at}: ${KILLED_RAISE}`);
      return c;
    }
    // What stands stays: in force, or killed with its value to restore (a restore is asked for as its value).
    const killedNow = row.value === 0 && row.valueBeforeKill !== null;
    out.value = standingValue(row);
    out.killed = killedNow;
    if (!valueWaits)
      raises.push({
        kind: "ceiling.value",
        endpointKey,
        identity,
        value: r.after,
        line: `${at}: value ${formatCount(standingValue(row))}${killedNow ? " (killed)" : ""} → ${formatCount(r.after)}`,
      });
  }
  // The standing value and the default must fit the bounds kept: a min raised past them waits with the max.
  out.min = Math.min(out.min, out.max, out.value === 0 ? out.min : out.value);
  out.default = clamp(out.default, out.min, out.max);
  return out;
}

/** A new budget above its default is asked for whole (budget.create): until approved it is not there. */
function newBudget(spec: BudgetSpec, raises: FileRaise[], errors: string[], looserThanArchived: boolean): BudgetSpec[] {
  if (!newAboveDefault(spec) && !looserThanArchived) return [spec];
  if (spec.killed) {
    errors.push(`budget ${spec.key}: new, killed, with a value to restore above its default: ${KILLED_RAISE}`);
    return [spec];
  }
  const why = looserThanArchived ? ", looser than a budget archived in the last 24 hours over the same members" : "";
  raises.push({
    kind: "budget.create",
    budgetKey: spec.key,
    spec,
    line: `budget ${spec.key}: new budget at ${formatMoney(spec.value, spec.currency)} (its default ${formatMoney(spec.default, spec.currency)})${why}`,
  });
  return [];
}

function withholdBudget(existing: CatalogBudget, spec: BudgetSpec, raises: FileRaise[], errors: string[]): BudgetSpec {
  const row = existing.budget;
  const r = budgetRaise(row, spec);
  const money = (m: number) => formatMoney(m, spec.currency);
  const at = `budget ${spec.key}`;
  const out = { ...spec };
  if (r.unarchive) {
    out.archived = true;
    raises.push({ kind: "budget.unarchive", budgetKey: spec.key, line: `${at}: unarchive` });
  }
  // A member removed from a budget that stays live: it stays a member until a second admin approves.
  const lost = existing.spec.members.filter((m) => !spec.members.includes(m));
  if (lost.length > 0 && row.archivedAt === null && !spec.archived) {
    out.members = [...spec.members, ...lost];
    raises.push({
      kind: "budget.members",
      budgetKey: spec.key,
      members: [...spec.members].sort(),
      line: `${at}: members - ${lost.join(", - ")} (their calls would no longer count against it)`,
    });
  }
  const valueWaits = r.value && r.max && r.after > row.maxValue;
  if (r.max) {
    out.max = row.maxValue;
    const then = valueWaits ? `; value ${money(r.after)} is asked for once these are approved: apply the file again` : "";
    raises.push({
      kind: "budget.bounds",
      budgetKey: spec.key,
      min: spec.min,
      max: spec.max,
      line: `${at}: bounds [${money(row.minValue)}, ${money(row.maxValue)}] → [${money(spec.min)}, ${money(spec.max)}]${then}`,
    });
  }
  if (r.value) {
    if (r.staysKilled) {
      errors.push(`${at}: ${KILLED_RAISE}`);
      return spec;
    }
    out.value = standingValue(row);
    out.killed = isKilled(row);
    if (!valueWaits)
      raises.push({
        kind: "budget.value",
        budgetKey: spec.key,
        value: r.after,
        line: `${at}: value ${money(standingValue(row))}${isKilled(row) ? " (killed)" : ""} → ${money(r.after)}`,
      });
  }
  if (r.max || r.value) {
    out.min = Math.min(out.min, out.max, out.value === 0 ? out.min : out.value);
    out.default = clamp(out.default, out.min, out.max);
    // An override above the max kept would be refused: it waits with the bounds.
    for (const o of out.overrides)
      if (o.value > out.max)
        errors.push(`${at} override ${o.caller}: ${money(o.value)} is above the max in force until the bounds are approved: apply it afterwards`);
  }
  return out;
}

/** Which raises a planned change holds: the kinds it can carry, on its endpoint (or budget) and ceiling. */
const KINDS_OF: Record<string, readonly FileRaise["kind"][]> = {
  "endpoint.create": ["ceiling.value"],
  "endpoint.update": ["endpoint.per_call_max", "endpoint.prices", "endpoint.billing_day"],
  "endpoint.unarchive": ["endpoint.unarchive"],
  "ceiling.add": ["ceiling.add"],
  "ceiling.update": ["ceiling.value", "ceiling.bounds"],
  "ceiling.restore": ["ceiling.value", "ceiling.bounds"],
  "ceiling.kill": ["ceiling.bounds"],
  "budget.create": ["budget.create"],
  "budget.update": ["budget.bounds", "budget.value", "budget.members"],
  "budget.adjust": ["budget.value"],
  "budget.restore": ["budget.value"],
  "budget.unarchive": ["budget.unarchive"],
  "plan.value.set": ["plan.value"],
  "plan.value.remove": ["plan.value"],
  "plan.default": ["plan.default"],
  "budget.archive": ["budget.archive"],
};

const keyOf = (r: FileRaise) => ("endpointKey" in r ? r.endpointKey : "planKey" in r ? r.planKey : r.budgetKey);
const identityOf = (r: FileRaise) => ("identity" in r ? r.identity : r.kind === "ceiling.add" ? ceilingIdentity(r.ceiling) : undefined);

/** Marks each planned change with the raises it holds (`needsApproval`, one line each), for `plan`. */
export function markApprovals(
  plans: { changes: { action: string; endpointKey: string; ceiling?: string; needsApproval?: string[] }[] }[],
  raises: readonly FileRaise[],
): void {
  for (const change of plans.flatMap((p) => p.changes)) {
    const kinds = KINDS_OF[change.action] ?? [];
    const held = raises.filter(
      (r) => kinds.includes(r.kind) && keyOf(r) === change.endpointKey && (change.ceiling === undefined || identityOf(r) === change.ceiling),
    );
    if (held.length > 0) change.needsApproval = held.map((r) => r.line);
  }
}
