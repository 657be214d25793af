import { InputError } from "@/lib/errors";
import type { z } from "zod";
import type { Db } from "@/db/client";
import { budgets, limitOverrides, type Budget } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import { actorName } from "@/lib/audit/actor";
import { newOverrideRows } from "@/lib/limits/overrides";
import { CatalogError, invalidInput, requireCatalogReason, zodIssues } from "@/lib/limits/errors";
import { requireApproval, type ChangeControl } from "@/lib/control/context";
import { isNewValueRaise } from "@/lib/control/raise";
import { sqlState } from "@/db/sql-state";
import { budgetSentence } from "./money";
import { BUDGET_RE_ADD_WINDOW_HOURS, loosenedArchivedBudget } from "./re-add";
import { BudgetSpec } from "./spec";
import { budgetMoney as money } from "./target";
import { type BudgetChange, endpointsByKey, lockedMembers, lockMembers, recordBudgetChange, setMembers } from "./write";

// A budget is created in one transaction: the members' endpoint locks, the row, its members and
// overrides, and one budget.create event that holds it all.

function parse<T extends z.ZodType>(schema: T, input: unknown): z.infer<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw invalidInput(zodIssues(parsed.error));
  return parsed.data;
}

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
  const overrides = newOverrideRows(row.limitId, spec.overrides, (message) => InputError.of(`${spec.key}: ${message}`));
  if (overrides.length > 0) await p.tx.insert(limitOverrides).values(overrides);
  const { key: _key, ...after } = spec;
  await recordBudgetChange(p, row, {
    action: "budget.create",
    appliedValue: row.value,
    details: { after, worstCase: budgetSentence({ ...spec, value: row.value }) },
  });
  return row;
}
