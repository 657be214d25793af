import { InputError } from "@/lib/errors";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { budgets, ceilings, type Budget, type Ceiling, type Endpoint } from "@/db/schema";
import { CatalogError } from "@/lib/limits/errors";
import { CeilingError } from "@/lib/ceilings/errors";
import { lockCeiling } from "@/lib/ceilings/lock";
import { writeCeilingValue } from "@/lib/ceilings/adjust";
import { writeBounds } from "@/lib/ceilings/bounds";
import { writeBudgetValue } from "@/lib/budgets/adjust";
import { updateBudgetFields } from "@/lib/budgets/update";
import { lockedBudget } from "@/lib/budgets/write";
import { moveBounds } from "@/lib/limits/bounds";
import { moneyInputText, parseConfirmation, previewAdjustment } from "@/lib/limits/parse";
import { isBoundsRaise, isValueRaise } from "@/lib/control/raise";
import { activeRevertTo } from "@/lib/control/raise-floor";
import { ChangeControlError } from "@/lib/control/errors";
import type { AuditActor } from "@/lib/audit/record";
import type { ChangeControl } from "@/lib/control/context";
import { formatCount, formatMoney } from "@/lib/format";
import { ceilingLabel, endpointRows, parseChange, shownValue, withValue, worstDay } from "./ceiling-kinds";
import { fieldsWithBounds, worstOf } from "./budget-kinds";
import {
  type Applied,
  hasEnd,
  isKilled,
  KILLED_NO_END,
  type KindHandler,
  movedSince,
  type Prepared,
  type RaisedValue,
  staleMessage,
  type Worst,
} from "./prepared";

// A limit's value and its bounds, asked as `ceiling.value` / `budget.value` and `ceiling.bounds` /
// `budget.bounds`: one handler each for both kinds. Prepared on what is in force, applied under
// the locks of the direct edit (lockCeiling; lockedBudget, the members' endpoints first) through
// its own write code (writeCeilingValue, writeBounds; writeBudgetValue, updateBudgetFields), which
// the limits kernel writes once (lib/limits/value.ts, bounds.ts).

/** The fields of a ceiling or budget row these kinds read. */
type Row = Pick<Ceiling & Budget, "id" | "value" | "valueBeforeKill" | "minValue" | "maxValue" | "defaultValue">;

/** The limit a request names, unlocked, as a request is prepared on it. */
type Found = {
  row: Row;
  /** How a summary names it: `llm.chat units/day`, `budget team-llm`. */
  label: string;
  ids: Pick<Prepared, "endpointId" | "ceilingId" | "budgetId">;
  /** Money in this currency (a budget); undefined: a count (a ceiling). */
  money: string | undefined;
  /** The currency the worst case is priced in. */
  currency: string;
  /** The worst case a day with the limit at `value` (null: an archived budget limits nothing). */
  worst: (value: number) => Worst | null;
};

type Verb = { actor: AuditActor; reason: string; changeControl: ChangeControl };

/** What differs between the kinds: how a request names its limit, finds and locks it, and which writes apply it. */
type LimitKind<Named, Locked> = {
  named: z.ZodType<Named>;
  find(db: Db, change: Named): Promise<Found>;
  /** The limit, locked as the direct edit locks it; it throws not_found (or a conflict) when it is gone. */
  lock(tx: Db, change: Named): Promise<Locked>;
  rowOf(locked: Locked): Row;
  writeValue(tx: Db, locked: Locked, edit: Verb & { input: string; confirm: string }): Promise<{ applied: number; version: number }>;
  raisedIds(locked: Locked): Pick<RaisedValue, "endpointId" | "ceilingId" | "budgetId">;
  writeBounds(tx: Db, locked: Locked, bounds: { min: number; max: number }, verb: Verb): Promise<unknown>;
  /** Money in this currency (a budget's); undefined: a count. */
  moneyOf(locked: Locked): string | undefined;
};

const Whole = (what: string, min: number) =>
  z
    .number({ error: `${what} must be a whole number` })
    .int(`${what} must be a whole number`)
    .min(min, `${what} must be ${min} or more`)
    .max(Number.MAX_SAFE_INTEGER, `${what} is too large`);

/** The target is gone (a ceiling removed, a budget's members moved under us): stale, not an error. */
export function goneMessage(error: unknown): string | null {
  return (error instanceof CatalogError || error instanceof CeilingError) && (error.code === "not_found" || error.code === "conflict") ? error.message : null;
}

const text = (money: string | undefined, value: number) => (money === undefined ? formatCount(value) : formatMoney(value, money));
const inputText = (money: string | undefined, value: number) => (money === undefined ? String(value) : moneyInputText(value));

function preview(row: Row, money: string | undefined, value: number) {
  return previewAdjustment({
    raw: inputText(money, value),
    current: row.value,
    valueBeforeKill: row.valueBeforeKill,
    min: row.minValue,
    max: row.maxValue,
    currency: money,
  });
}

// The bounds and default are part of what a value request was asked against: the value it shows
// was clamped to them, and a restore falls back to the default. Older rows hold value and
// valueBeforeKill only; movedSince compares the keys a row has, so they still apply.
const valueBefore = (r: Row) => ({ value: r.value, valueBeforeKill: r.valueBeforeKill, min: r.minValue, max: r.maxValue, default: r.defaultValue });
// The default too: new bounds pull it in, and a restore at 0 with nothing remembered puts it back.
const boundsBefore = (r: Row) => ({ min: r.minValue, max: r.maxValue, value: r.value, default: r.defaultValue });

async function lockedOrGone<Locked>(lock: () => Promise<Locked>): Promise<Locked | { gone: string }> {
  try {
    return await lock();
  } catch (error) {
    const message = goneMessage(error);
    if (message !== null) return { gone: message };
    throw error;
  }
}

const isGone = (v: unknown): v is { gone: string } => typeof v === "object" && v !== null && "gone" in v;

/** `<kind>.value`: a new value (a raise, a restore) for one ceiling or budget. */
function valueHandler<Named, Locked>(k: LimitKind<Named, Locked>): KindHandler {
  // The value, then the rest as the kind names its limit (strictly: an unknown field is refused).
  const parse = (raw: unknown) => {
    const { value, ...rest } = parseChange(z.looseObject({ value: Whole("value", 0) }), raw);
    return { named: parseChange(k.named, rest), value };
  };
  return {
    async prepare(db, raw): Promise<Prepared> {
      const { named, value } = parse(raw);
      const found = await k.find(db, named);
      const { row, money } = found;
      const seen = preview(row, money, value);
      if (!seen.ok) throw InputError.of(seen.error);
      if (seen.kind === "unchanged") throw new ChangeControlError("unchanged", seen.message);
      const was = row.value === 0 && row.valueBeforeKill !== null ? `killed (restores to ${text(money, row.valueBeforeKill)})` : text(money, row.value);
      return {
        ...found.ids,
        change: { ...(named as Record<string, unknown>), value },
        before: valueBefore(row),
        after: { value: seen.applied },
        summary: `${found.label} ${was} → ${text(money, seen.applied)}`,
        worstBefore: found.worst(row.value),
        worstAfter: found.worst(seen.applied),
        currency: found.currency,
        raise: isValueRaise(row, seen.applied),
        confirm: seen.needsConfirmation ? { expected: text(money, seen.typed), matches: (t) => parseConfirmation(t, money) === seen.typed } : null,
        mayEnd: true,
        ...(isKilled(row) ? { endRefused: KILLED_NO_END } : {}),
      };
    },
    async apply({ tx, request, actor, control }): Promise<Applied> {
      const { named, value } = parse(request.change);
      const locked = await lockedOrGone(() => k.lock(tx, named));
      if (isGone(locked)) return { stale: locked.gone };
      const row = k.rowOf(locked);
      const moved = movedSince(request.before, valueBefore(row));
      if (moved.length > 0) return { stale: staleMessage(moved) };
      // Refused when asked; held here too, should a row predate that check.
      if (hasEnd(request) && isKilled(row)) return { stale: `nothing was applied: ${KILLED_NO_END}` };
      // Written as typed, so the audit row keeps what was typed and that it was clamped, and held to
      // the value the request showed: with the same bounds in force the clamp lands there again.
      const money = k.moneyOf(locked);
      const input = inputText(money, value);
      const shown = shownValue(request.after);
      const now = preview(row, money, value);
      if (!now.ok || now.applied !== shown) return { stale: `nothing was applied: ${text(money, value)} would not apply as ${text(money, shown)} now` };
      const result = await k.writeValue(tx, locked, { input, confirm: input, actor, reason: request.reason, changeControl: control });
      return { stale: null, raised: { ...k.raisedIds(locked), revertTo: row.value, raisedTo: result.applied, raisedVersion: result.version } };
    },
  };
}

/** `<kind>.bounds`: new bounds for one ceiling or budget, which pull its values inside them. */
function boundsHandler<Named, Locked>(k: LimitKind<Named, Locked>): KindHandler {
  const Bounds = z
    .looseObject({ min: Whole("min", 0), max: Whole("max", 1) })
    .refine((b) => b.min <= b.max, { message: "min must not be above max", path: ["min"] });
  const parse = (raw: unknown) => {
    const { min, max, ...rest } = parseChange(Bounds, raw);
    return { named: parseChange(k.named, rest), bounds: { min, max } };
  };
  return {
    async prepare(db, raw) {
      const { named, bounds } = parse(raw);
      const found = await k.find(db, named);
      const { row, money } = found;
      if (row.minValue === bounds.min && row.maxValue === bounds.max) throw new ChangeControlError("unchanged", "those are already the bounds: nothing to ask");
      const move = moveBounds(row, bounds);
      const revertTo = await activeRevertTo(db, found.ids.ceilingId !== null ? { ceilingId: row.id } : { budgetId: row.id });
      return {
        ...found.ids,
        confirm: null,
        mayEnd: false,
        change: { ...(named as Record<string, unknown>), ...bounds },
        before: boundsBefore(row),
        after: { ...bounds, value: move.value },
        summary: `${found.label} bounds ${text(money, row.minValue)}..${text(money, row.maxValue)} → ${text(money, bounds.min)}..${text(money, bounds.max)}`,
        // The worst case moves only if the value is pulled; the bound itself is what a later edit may reach.
        worstBefore: found.worst(row.value),
        worstAfter: found.worst(move.value),
        currency: found.currency,
        raise: isBoundsRaise(
          { ...row, revertTo },
          { max: bounds.max, min: bounds.min, value: move.value, valueBeforeKill: move.valueBeforeKill, default: move.defaultValue },
        ),
      };
    },
    async apply({ tx, request, actor, control }) {
      const { named, bounds } = parse(request.change);
      const locked = await lockedOrGone(() => k.lock(tx, named));
      if (isGone(locked)) return { stale: locked.gone };
      const moved = movedSince(request.before, boundsBefore(k.rowOf(locked)));
      if (moved.length > 0) return { stale: staleMessage(moved) };
      await k.writeBounds(tx, locked, bounds, { actor, reason: request.reason, changeControl: control });
      return { stale: null, raised: null };
    },
  };
}

const Id = z.number({ error: "an id must be a whole number" }).int("an id must be a whole number").positive("an id must be positive");
const Key = z.string({ error: "a budget key is required" }).min(1, "a budget key is required").max(64);

const ceilingKind: LimitKind<{ ceilingId: number }, { ceiling: Ceiling; endpoint: Endpoint }> = {
  named: z.strictObject({ ceilingId: Id }),
  async find(db, { ceilingId }) {
    const [ceiling] = await db.select().from(ceilings).where(eq(ceilings.id, ceilingId));
    if (!ceiling) throw new ChangeControlError("not_found", `no ceiling #${ceilingId}`);
    const { endpoint, rows } = await endpointRows(db, ceiling.endpointId);
    return {
      row: ceiling,
      label: `${endpoint.key} ${ceilingLabel(ceiling)}`,
      ids: { endpointId: endpoint.id, ceilingId: ceiling.id, budgetId: null },
      money: undefined,
      currency: endpoint.currency,
      worst: (value) => worstDay(withValue(rows, ceiling.id, value), endpoint),
    };
  },
  lock: (tx, { ceilingId }) => lockCeiling(tx, ceilingId),
  rowOf: (locked) => locked.ceiling,
  moneyOf: () => undefined,
  writeValue: (tx, locked, edit) => writeCeilingValue(tx, locked, edit),
  raisedIds: (locked) => ({ endpointId: locked.endpoint.id, ceilingId: locked.ceiling.id }),
  writeBounds: (tx, locked, bounds, verb) => writeBounds(tx, locked, bounds, { ...verb, rawInput: `${bounds.min}..${bounds.max}` }),
};

const budgetKind: LimitKind<{ budgetKey: string }, Budget> = {
  named: z.strictObject({ budgetKey: Key }),
  async find(db, { budgetKey }) {
    const [budget] = await db.select().from(budgets).where(eq(budgets.key, budgetKey));
    if (!budget) throw new ChangeControlError("not_found", `no budget '${budgetKey}'`);
    return {
      row: budget,
      label: `budget ${budget.key}`,
      ids: { endpointId: null, ceilingId: null, budgetId: budget.id },
      money: budget.currency,
      currency: budget.currency,
      worst: (value) => worstOf({ ...budget, value }),
    };
  },
  lock: async (tx, { budgetKey }) => (await lockedBudget(tx, budgetKey)).budget,
  rowOf: (budget) => budget,
  moneyOf: (budget) => budget.currency,
  writeValue: (tx, budget, edit) => writeBudgetValue(tx, budget, edit),
  raisedIds: (budget) => ({ endpointId: null, budgetId: budget.id }),
  // A budget's bounds are saved with its other fields as they are (the default pulled inside them).
  writeBounds: async (tx, budget, bounds, verb) => updateBudgetFields({ tx, ...verb }, budget.key, await fieldsWithBounds(tx, budget.key, bounds)),
};

export const ceilingValue = valueHandler(ceilingKind);
export const budgetValue = valueHandler(budgetKind);
export const ceilingBounds = boundsHandler(ceilingKind);
export const budgetBounds = boundsHandler(budgetKind);
