import { inArray } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "@/db/client";
import { budgets, endpoints, limitOverrides, type Budget } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { readReason } from "@/lib/audit/reason";
import { actorName } from "@/lib/audit/actor";
import {
  deleteLimitOverride,
  newOverrideRows,
  type OverrideInput,
  type OverrideRemoval,
  type OverrideTarget,
  writeLimitOverride,
} from "@/lib/limits/overrides";
import { parseCaller, recordRejectedInput } from "@/lib/limits/rejected";
import { clampToBounds, parseMoneyInput, previewAdjustment, type AdjustmentKind, type Clamp } from "@/lib/limits/parse";
import { CatalogError, invalidInput, requireCatalogReason, zodIssues } from "@/lib/limits/errors";
import { requireApproval, type ChangeControl } from "@/lib/control/context";
import { isBoundsRaise, isNewValueRaise, isValueRaise } from "@/lib/control/raise";
import { activeRevertTo } from "@/lib/control/raise-floor";
import { sqlState } from "@/db/sql-state";
import { clampPlanValues } from "@/lib/limits/plan-values";
import { formatMoney } from "@/lib/format";
import type { BudgetWindow } from "@/lib/vocabulary";
import { budgetSentence } from "./money";
import { BUDGET_RE_ADD_WINDOW_HOURS, loosenedArchivedBudget, looserRecentBudget } from "./re-add";
import { BudgetFields, BudgetSpec } from "./spec";
import { type BudgetChange, endpointsByKey, lockedBudget, lockedMembers, lockMembers, recordBudgetChange, saveBudget, setMembers } from "./write";
import type { AdjustLimitInput } from "@/lib/limits/adjust";

// The budget verbs the dashboard calls (and the catalog file, through the same writes). Each runs
// in one transaction: the members' endpoint locks, then the budget row FOR UPDATE, the version the
// person saw, the write, and its one audit event (budget.create, budget.update, budget.adjust, ...).

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidInput(zodIssues(parsed.error));
  return parsed.data;
}

function optionalReason(reason: string | undefined): string | null {
  const read = readReason(reason, false);
  if (!read.ok) throw new CatalogError(read.problem.code, read.problem.message);
  return read.text;
}

const money = (b: Pick<Budget, "currency">, micros: number | null) => (micros === null ? "none" : formatMoney(micros, b.currency));

// ---- create ------------------------------------------------------------------------------------

export type CreateBudgetParams = { spec: unknown; actor: AuditActor; reason: string; changeControl?: ChangeControl };

export async function createBudget(db: Db, p: CreateBudgetParams): Promise<Budget> {
  const spec = parse(BudgetSpec, p.spec);
  const reason = requireCatalogReason(p.reason);
  return db.transaction((tx) => insertBudget({ tx, actor: p.actor, reason, changeControl: p.changeControl }, spec));
}

/**
 * Creates a budget with its members and overrides under the members' locks; one budget.create
 * event holds it all. `mayBeArchived`: members a catalog file creates archived in the same apply.
 */
export async function insertBudget(p: BudgetChange, spec: BudgetSpec, mayBeArchived: ReadonlySet<string> = new Set()): Promise<Budget> {
  if (isNewValueRaise(spec)) {
    requireApproval(p.changeControl, `a new budget ${spec.key} at ${money(spec, spec.value)}, above its default ${money(spec, spec.default)},`, {
      kind: "budget.create",
      change: { spec },
    });
  }
  const locked = [...(await endpointsByKey(p.tx, spec.members)).values()].map((e) => e.id);
  await lockMembers(p.tx, locked);
  const members = await lockedMembers(p.tx, spec.members, spec.currency, mayBeArchived, locked);
  // Archived in the last 24 hours and re-created looser over the same members: a raise (re-add.ts).
  const loosened = await loosenedArchivedBudget(
    p.tx,
    spec,
    members.map((m) => m.id),
  );
  if (loosened !== null) {
    requireApproval(
      p.changeControl,
      `a new budget ${spec.key} looser than budget ${loosened} (archived in the last ${BUDGET_RE_ADD_WINDOW_HOURS} hours, over the same members)`,
      { kind: "budget.create", change: { spec } },
    );
  }
  const killed = spec.killed === true && spec.value > 0;
  const now = new Date();
  let row: Budget | undefined;
  try {
    [row] = await p.tx
      .insert(budgets)
      .values({
        key: spec.key,
        name: spec.name,
        currency: spec.currency,
        scope: spec.scope,
        window: spec.window,
        billingDay: spec.billingDay,
        value: killed ? 0 : spec.value,
        valueBeforeKill: killed ? spec.value : null,
        killedAt: killed ? now : null,
        killedBy: killed ? actorName(p.actor) : null,
        minValue: spec.min,
        maxValue: spec.max,
        defaultValue: spec.default,
        alertThresholds: spec.alertThresholds,
        archivedAt: spec.archived ? now : null,
        archivedBy: spec.archived ? actorName(p.actor) : null,
      })
      .returning();
  } catch (error) {
    if (sqlState(error) === "23505")
      throw new CatalogError("duplicate_key", `a budget with key '${spec.key}' already exists (keys are unique, also among archived budgets)`);
    throw error;
  }
  if (!row) throw new Error("insert returned no budget");
  await setMembers(
    p.tx,
    row.id,
    members.map((m) => m.id),
  );
  const overrides = newOverrideRows(row.limitId, spec.overrides, (message) => new CatalogError("invalid_input", `${spec.key}: ${message}`));
  if (overrides.length > 0) await p.tx.insert(limitOverrides).values(overrides);
  const { key: _key, ...after } = spec;
  await recordBudgetChange(p, row, {
    action: "budget.create",
    appliedValue: row.value,
    details: { after, worstCase: budgetSentence({ ...spec, value: row.value }) },
  });
  return row;
}

// ---- update: name, members, thresholds, bounds ---------------------------------------------------

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
  const value = clampToBounds(budget.value, next);
  const beforeKill = budget.valueBeforeKill === null ? null : clampToBounds(budget.valueBeforeKill, next).applied;
  const changes: BudgetFieldChange[] = [];
  const add = (field: BudgetFieldChange["field"], before: unknown, after: unknown) => changes.push({ field, before, after });
  if (budget.name !== next.name) add("name", budget.name, next.name);
  if (!sameList(currentKeys, next.members)) add("members", [...currentKeys].sort(), [...next.members].sort());
  const thresholds = [...budget.alertThresholds].sort((a, b) => a - b);
  if (thresholds.join(",") !== next.alertThresholds.join(",")) add("alertThresholds", thresholds, next.alertThresholds);
  if (budget.minValue !== next.min) add("min", budget.minValue, next.min);
  if (budget.maxValue !== next.max) add("max", budget.maxValue, next.max);
  if (budget.defaultValue !== next.default) add("default", budget.defaultValue, next.default);
  if (value.applied !== budget.value) add("value", budget.value, value.applied);
  if (beforeKill !== budget.valueBeforeKill) add("valueBeforeKill", budget.valueBeforeKill, beforeKill);
  if (changes.length === 0) return [];
  // A default raised where a restore would bring it back (at 0, nothing remembered) is a raise too.
  const revertTo = await activeRevertTo(p.tx, { budgetId: budget.id });
  if (isBoundsRaise({ ...budget, revertTo }, { max: next.max, min: next.min, value: value.applied, valueBeforeKill: beforeKill, default: next.default })) {
    if (budget.minValue === next.min && budget.maxValue === next.max) {
      // There is no kind of request for a default alone: ask for the value instead (budget.value).
      requireApproval(
        p.changeControl,
        `${budget.key} default ${money(budget, budget.defaultValue)} → ${money(budget, next.default)} (a restore of the budget at 0 puts its default back)`,
      );
    }
    requireApproval(
      p.changeControl,
      `${budget.key} bounds ${money(budget, budget.minValue)}..${money(budget, budget.maxValue)} → ${money(budget, next.min)}..${money(budget, next.max)}`,
      {
        kind: "budget.bounds",
        change: { budgetKey: budget.key, min: next.min, max: next.max },
      },
    );
  }
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
    value: value.applied,
    valueBeforeKill: beforeKill,
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
    clamped: value.clamped !== null,
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

// ---- adjust the value ----------------------------------------------------------------------------

export type AdjustBudgetParams = AdjustLimitInput & { key: string };

export type AdjustBudgetResult = {
  key: string;
  kind: Exclude<AdjustmentKind, "unchanged">;
  previous: number;
  applied: number;
  typed: number;
  clamped: Clamp;
  version: number;
  currency: string;
  message: string;
};

/**
 * Changes a budget's value: clamped into its bounds (the clamp is logged), 0 kills it (its value
 * is remembered for restore), a value on a killed budget restores it; a raise to 5x or more is
 * typed twice.
 */
export async function adjustBudget(db: Db, p: AdjustBudgetParams): Promise<AdjustBudgetResult> {
  const parsed = parseMoneyInput(p.input, "value");
  if (!parsed.ok) {
    await recordRejectedInput(db, { kind: "budget", key: p.key }, p, parsed.error);
    throw invalidInput([{ path: "input", message: parsed.error }]);
  }
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key, { expectedVersion: p.expectedVersion });
    return writeBudgetValue(tx, budget, { ...p, reason });
  });
}

export type BudgetValueEdit = Pick<AdjustBudgetParams, "input" | "actor" | "reason" | "confirm" | "changeControl"> & {
  /** Joins the audit row's details: the raise end that made the change. */
  details?: Record<string, unknown>;
};

/**
 * The value edit of a locked budget with its audit row: what adjustBudget does after its locks,
 * and what an approved budget.value request applies. A raise needs a ChangeControl.
 */
export async function writeBudgetValue(tx: Db, budget: Budget, p: BudgetValueEdit): Promise<AdjustBudgetResult> {
  const preview = previewAdjustment({
    raw: p.input,
    current: budget.value,
    valueBeforeKill: budget.valueBeforeKill,
    min: budget.minValue,
    max: budget.maxValue,
    currency: budget.currency,
  });
  if (!preview.ok) throw invalidInput([{ path: "input", message: preview.error }]);
  if (preview.kind === "unchanged") throw new CatalogError("unchanged", preview.message);
  if (preview.needsConfirmation) {
    const confirm = parseMoneyInput(p.confirm ?? "", "confirmation");
    if (!confirm.ok || confirm.micros !== preview.typed) {
      throw new CatalogError("confirmation_required", `${preview.message}. The confirmation must be exactly ${formatMoney(preview.typed, budget.currency)}`);
    }
  }
  if (isValueRaise(budget, preview.applied)) {
    requireApproval(p.changeControl, `${budget.key} ${money(budget, budget.value)} → ${money(budget, preview.applied)}`, {
      kind: "budget.value",
      change: { budgetKey: budget.key, value: preview.typed },
    });
  }
  const kind = preview.kind;
  const now = new Date();
  const saved = await saveBudget(tx, budget.id, {
    value: preview.applied,
    ...(kind === "kill"
      ? { valueBeforeKill: budget.value, killedAt: now, killedBy: actorName(p.actor) }
      : { valueBeforeKill: null, killedAt: null, killedBy: null }),
    updatedAt: now,
  });
  await recordBudgetChange({ tx, actor: p.actor, reason: p.reason, changeControl: p.changeControl, details: p.details }, budget, {
    action: kind === "kill" ? "budget.kill" : kind === "restore" ? "budget.restore" : "budget.adjust",
    rawInput: p.input,
    previousValue: budget.value,
    appliedValue: preview.applied,
    clamped: preview.clamped !== null,
    details: {
      kind,
      typed: preview.typed,
      clampedTo: preview.clamped,
      bounds: { min: budget.minValue, max: budget.maxValue },
      currency: budget.currency,
      ...(kind === "restore" ? { valueBeforeKill: budget.valueBeforeKill } : {}),
    },
  });
  return {
    key: budget.key,
    kind,
    previous: budget.value,
    applied: preview.applied,
    typed: preview.typed,
    clamped: preview.clamped,
    version: saved.version,
    currency: budget.currency,
    message: preview.message,
  };
}

// ---- kill and restore ----------------------------------------------------------------------------

export type KillBudgetParams = { key: string; actor: AuditActor; reason?: string };
export type BudgetValueChange = { key: string; previous: number; applied: number; currency: string };

/** Sets the budget to 0, remembering its value for restore: every call on its members is refused. */
export async function killBudget(db: Db, p: KillBudgetParams): Promise<BudgetValueChange> {
  const reason = optionalReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    // Killing twice must not make restore put back 0.
    if (budget.value === 0) throw new CatalogError("unchanged", `${budget.key} is already killed`);
    await killLocked({ tx, actor: p.actor, reason }, budget, budget.value);
    return { key: budget.key, previous: budget.value, applied: 0, currency: budget.currency };
  });
}

/** The kill of a locked budget; `restoreTo` is the value a restore puts back. */
export async function killLocked(p: BudgetChange, budget: Budget, restoreTo: number): Promise<void> {
  const now = new Date();
  await saveBudget(p.tx, budget.id, { value: 0, valueBeforeKill: restoreTo, killedAt: now, killedBy: actorName(p.actor), updatedAt: now });
  await recordBudgetChange(p, budget, {
    action: "budget.kill",
    previousValue: budget.value,
    appliedValue: 0,
    clamped: false,
    details: { valueBeforeKill: restoreTo },
  });
}

/** Puts back the value from before the kill (its default if it had none), inside the bounds in force. */
export async function restoreBudget(db: Db, p: KillBudgetParams): Promise<BudgetValueChange> {
  const reason = optionalReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    if (budget.value !== 0) throw new CatalogError("unchanged", `${budget.key} is not killed: nothing to restore`);
    const remembered = budget.valueBeforeKill ?? budget.defaultValue;
    const { applied } = clampToBounds(remembered, { min: budget.minValue, max: budget.maxValue });
    if (applied === 0) throw new CatalogError("unchanged", `${budget.key} has no value to restore: set a value`);
    await restoreLocked({ tx, actor: p.actor, reason }, budget, applied);
    return { key: budget.key, previous: 0, applied, currency: budget.currency };
  });
}

export async function restoreLocked(p: BudgetChange, budget: Budget, applied: number): Promise<void> {
  await saveBudget(p.tx, budget.id, { value: applied, valueBeforeKill: null, killedAt: null, killedBy: null });
  await recordBudgetChange(p, budget, {
    action: "budget.restore",
    previousValue: 0,
    appliedValue: applied,
    clamped: budget.valueBeforeKill !== null && applied !== budget.valueBeforeKill,
    details: { valueBeforeKill: budget.valueBeforeKill, killedAt: budget.killedAt?.toISOString() ?? null, killedBy: budget.killedBy },
  });
}

// ---- archive ---------------------------------------------------------------------------------------

export type ArchiveBudgetParams = { key: string; archived: boolean; actor: AuditActor; reason: string; changeControl?: ChangeControl };

/** Archived: it charges and refuses nothing from the next batch on; its history stays. */
export async function setBudgetArchived(db: Db, p: ArchiveBudgetParams): Promise<void> {
  const reason = requireCatalogReason(p.reason);
  await db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    if ((budget.archivedAt !== null) === p.archived)
      throw new CatalogError("unchanged", `${budget.key} is already ${p.archived ? "archived" : "live (not archived)"}`);
    await archiveLocked({ tx, actor: p.actor, reason, changeControl: p.changeControl }, budget, p.archived);
  });
}

export async function archiveLocked(p: BudgetChange, budget: Budget, archived: boolean): Promise<void> {
  // The rules make every unarchive a second admin's decision (docs/change-control.md), though an
  // archived budget limits nothing: kept as one rule for endpoints and budgets.
  if (!archived) requireApproval(p.changeControl, `unarchiving budget ${budget.key}`, { kind: "budget.unarchive", change: { budgetKey: budget.key } });
  // Archived while a looser budget created in the last 24 hours shares its members: that one takes its place (re-add.ts).
  const looser = archived ? await looserRecentBudget(p.tx, budget) : null;
  if (looser !== null) {
    requireApproval(
      p.changeControl,
      `archiving budget ${budget.key} while budget ${looser}, created in the last ${BUDGET_RE_ADD_WINDOW_HOURS} hours over the same members, lets more through`,
      {
        kind: "budget.archive",
        change: { budgetKey: budget.key },
      },
    );
  }
  await saveBudget(p.tx, budget.id, { archivedAt: archived ? new Date() : null, archivedBy: archived ? actorName(p.actor) : null });
  await recordBudgetChange(p, budget, { action: archived ? "budget.archive" : "budget.unarchive", details: {} });
}

// ---- per-account overrides -------------------------------------------------------------------------

// A per-account budget's overrides, through the one writer of both kinds (lib/limits/overrides.ts,
// where change control and the lock order are said): writeOverride and deleteOverride hold a
// catalog file's overrides to it too. Lock order: the members' endpoints, the budget, the account.
export type SetBudgetOverrideParams = OverrideInput & { key: string };
export type RemoveBudgetOverrideParams = OverrideRemoval & { key: string };
export type BudgetOverrideResult = {
  key: string;
  caller: string;
  previous: number | null;
  applied: number | null;
  clamped: Clamp;
  currency: string;
  /** When the override ends by itself (null: never). */
  expiresAt: Date | null;
};

/** One billing account's own value on a per-account budget, inside its bounds; 0 blocks that account on every member. */
export async function setBudgetOverride(db: Db, p: SetBudgetOverrideParams): Promise<BudgetOverrideResult> {
  const caller = parseCaller(p.caller);
  const parsed = parseMoneyInput(p.input, "value");
  if (!parsed.ok) {
    await recordRejectedInput(db, { kind: "budget", key: p.key }, p, parsed.error, { caller, override: true });
    throw invalidInput([{ path: "input", message: parsed.error }]);
  }
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    const { applied, clamped } = clampToBounds(parsed.micros, { min: budget.minValue, max: budget.maxValue });
    const { previous, expiresAt } = await writeOverride(
      { tx, actor: p.actor, reason, changeControl: p.changeControl },
      budget,
      { caller, value: applied, reason, expiresAfterSeconds: p.expiresAfterSeconds },
      { rawInput: p.input, clamped },
    );
    return { key: budget.key, caller, previous, applied, clamped, currency: budget.currency, expiresAt };
  });
}

/** Sets an override of a locked per-account budget; returns the value it had (null: none) and its end. */
export async function writeOverride(
  p: BudgetChange,
  budget: Budget,
  o: { caller: string; value: number; reason: string; expiresAfterSeconds?: number | null; expiresAt?: Date | null },
  typed: { rawInput?: string; clamped?: Clamp } = {},
): Promise<{ previous: number | null; expiresAt: Date | null }> {
  if (budget.scope !== "account") throw invalidInput([{ path: "caller", message: `${budget.key} is a global budget: overrides are for a per-account budget` }]);
  const { previous: existing, expiresAt } = await writeLimitOverride(p.tx, overrideTarget(budget), {
    caller: o.caller,
    value: o.value,
    reason: o.reason,
    expiresAfterSeconds: o.expiresAfterSeconds,
    expiresAt: o.expiresAt,
    changeControl: p.changeControl,
  });
  await saveBudget(p.tx, budget.id, {});
  await recordBudgetChange(p, budget, {
    action: "budget.override.set",
    rawInput: typed.rawInput ?? null,
    previousValue: existing,
    appliedValue: o.value,
    clamped: (typed.clamped ?? null) !== null,
    details: { caller: o.caller, budgetValue: budget.value, clampedTo: typed.clamped ?? null, expiresAt: expiresAt?.toISOString() ?? null },
  });
  return { previous: existing, expiresAt };
}

/** Returns one billing account to the budget's own value. */
export async function removeBudgetOverride(db: Db, p: RemoveBudgetOverrideParams): Promise<BudgetOverrideResult> {
  const caller = parseCaller(p.caller);
  const reason = requireCatalogReason(p.reason);
  return db.transaction(async (tx) => {
    const { budget } = await lockedBudget(tx, p.key);
    const previous = await deleteOverride({ tx, actor: p.actor, reason, changeControl: p.changeControl }, budget, caller);
    return { key: budget.key, caller, previous, applied: null, clamped: null, currency: budget.currency, expiresAt: null };
  });
}

export async function deleteOverride(p: BudgetChange, budget: Budget, caller: string): Promise<number> {
  const removed = await deleteLimitOverride(p.tx, overrideTarget(budget), { caller, changeControl: p.changeControl });
  await saveBudget(p.tx, budget.id, {});
  await recordBudgetChange(p, budget, {
    action: "budget.override.remove",
    previousValue: removed,
    appliedValue: null,
    clamped: false,
    details: { caller },
  });
  return removed;
}

/** A per-account budget as its overrides see it. */
function overrideTarget(budget: Budget): OverrideTarget {
  return {
    kind: "budget",
    id: budget.id,
    limitId: budget.limitId,
    value: budget.value,
    label: `budget ${budget.key}`,
    format: (value) => money(budget, value),
    ask: (caller, value, ends) => ({
      kind: "budget.override",
      change: { budgetKey: budget.key, caller, value, ...(ends ? { expiresAfterSeconds: ends } : {}) },
    }),
    refuse: (code, message) => new CatalogError(code, message),
  };
}
