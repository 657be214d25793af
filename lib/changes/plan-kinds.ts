import { InputError } from "@/lib/errors";
import { eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "@/db/client";
import { accounts, budgets, ceilings, endpoints, plans, type Budget, type Ceiling, type Endpoint, type Plan } from "@/db/schema";
import { AccountError, assignPlans, lockAccounts, lockPlans, MAX_BULK_ROWS, parseAccountId, parsePlanKey, unblockAccount } from "@/lib/accounts";
import { parseMoneyInput, moneyInputText } from "@/lib/limits/parse";
import { CatalogError } from "@/lib/limits/errors";
import { formatCount, formatMoney } from "@/lib/format";
import { defaultSwitchLoosening, setDefaultPlan, setPlanKeyAssignable } from "@/lib/plans/change";
import { accountsLoosening, type Loosening } from "@/lib/limits/loosening";
import { previewPlanValue } from "@/lib/plans/preview";
import { lockedPlan, lockPlanEndpoints } from "@/lib/plans/write";
import { lockTarget, nameOf, planBinding, removalRaise, removePlanValue, setPlanValue, valueOf, type LockedTarget, type PlanTarget } from "@/lib/plans/values";
import { parseChange } from "./ceiling-kinds";
import { ChangeControlError } from "@/lib/control/errors";
import { type Applied, type KindHandler, movedSince, type Prepared, staleMessage, type Worst } from "./prepared";
import { planValueOf } from "@/lib/limits/plan-values";

// The kinds on plans and accounts (docs/change-control.md, "What is a raise"): a plan's value above
// what binds its accounts, the default switched to a looser plan, a plan marked assignable by key,
// accounts moved to a looser plan (one or a bulk body, one request), an unblock. "Looser" is the
// database's (ceilings.plan_loosening): prepare records what it found and apply, under the direct
// verb's own locks, finds it again; any difference is stale. Each applies through its direct verb.

const PlanKeyField = z.string({ error: "a plan key is required" }).min(1, "a plan key is required").max(64);
const none = { endpointId: null, ceilingId: null, budgetId: null, worstBefore: null, worstAfter: null, currency: null, confirm: null, mayEnd: false } as const;

async function planByKey(db: Db, key: string): Promise<Plan> {
  const [row] = await db.select().from(plans).where(eq(plans.key, key));
  if (!row) throw new ChangeControlError("not_found", `no plan '${key}'`);
  return row;
}

/** A lock that finds the plan, ceiling or budget gone: stale, not an error. */
async function orGone<T>(work: () => Promise<T>): Promise<T | { gone: string }> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CatalogError && (error.code === "not_found" || error.code === "conflict" || error.code === "not_per_caller"))
      return { gone: error.message };
    throw error;
  }
}
const isGone = (v: unknown): v is { gone: string } => typeof v === "object" && v !== null && "gone" in v;

/** As `before` keeps them: one string a limit (jsonb reorders an object's keys, never a string's text). */
const loosensKey = (l: readonly Loosening[]) => l.map((x) => `${x.limitKind} #${x.limitId} ${x.before} → ${x.after}`);
const loosensLine = (l: readonly Loosening[]) =>
  l.map((x) => `${x.limitKind} #${x.limitId} ${formatCount(x.before)} → ${formatCount(x.after)}${x.measure === "micros" ? " micros" : ""}`).join(", ");

// ---- plan.value ----------------------------------------------------------------------------------

const PlanValue = z
  .strictObject({
    planKey: PlanKeyField,
    ceilingId: z.number().int().positive().optional(),
    budgetKey: z.string().min(1).max(64).optional(),
    value: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable(),
  })
  .refine((c) => (c.ceilingId === undefined) !== (c.budgetKey === undefined), { message: "name one ceiling (ceilingId) or one budget (budgetKey)" });
type PlanValueChange = z.infer<typeof PlanValue>;

const targetOf = (c: PlanValueChange): PlanTarget => (c.ceilingId !== undefined ? { ceilingId: c.ceilingId } : { budgetKey: c.budgetKey ?? "" });

type Read = { kind: "ceiling"; ceiling: Ceiling; endpoint: Endpoint } | { kind: "budget"; budget: Budget };

async function readTarget(db: Db, t: PlanTarget): Promise<Read> {
  if ("ceilingId" in t) {
    const [row] = await db
      .select({ ceiling: ceilings, endpoint: endpoints })
      .from(ceilings)
      .innerJoin(endpoints, eq(endpoints.id, ceilings.endpointId))
      .where(eq(ceilings.id, t.ceilingId));
    if (!row) throw new ChangeControlError("not_found", `no ceiling #${t.ceilingId}`);
    if (row.ceiling.scope !== "caller") throw InputError.of(`ceiling #${t.ceilingId} is not per caller: a plan sets values on per-caller ceilings only`);
    return { kind: "ceiling", ...row };
  }
  const [budget] = await db.select().from(budgets).where(eq(budgets.key, t.budgetKey));
  if (!budget) throw new ChangeControlError("not_found", `no budget '${t.budgetKey}'`);
  if (budget.scope !== "account") throw InputError.of(`budget ${budget.key} is global: a plan sets values on per-account budgets only`);
  return { kind: "budget", budget };
}

const ownOf = (t: Read | LockedTarget) => (t.kind === "ceiling" ? t.ceiling : t.budget);
/** What was in force: the plan's value, and the own value and bounds it falls back to and lives in. */
const valueBefore = (planValue: number | null, t: Read | LockedTarget) => {
  const own = ownOf(t);
  return { value: planValue, own: planBinding(null, own), min: own.minValue, max: own.maxValue };
};
/** As one account on the plan can spend in a window: units (a ceiling of calls times the per-call max) or micros. */
const worstOf = (t: Read, binding: number): Worst =>
  t.kind === "ceiling" ? { units: t.ceiling.metric === "units" ? binding : binding * t.endpoint.perCallMax, micros: null } : { units: null, micros: binding };
const textOf = (t: Read | LockedTarget, v: number) => (t.kind === "budget" ? moneyInputText(v) : String(v));
const showOf = (t: Read, v: number) => (t.kind === "budget" ? formatMoney(v, t.budget.currency) : formatCount(v));

export const planValue: KindHandler = {
  async prepare(db, raw): Promise<Prepared> {
    const change = parseChange(PlanValue, raw);
    const plan = await planByKey(db, change.planKey);
    const t = await readTarget(db, targetOf(change));
    const own = ownOf(t);
    const current = await planValueOf(db, plan.id, own.limitId);
    const before = planBinding(current, own);
    let after: number;
    let confirm: Prepared["confirm"] = null;
    if (change.value === null) {
      if (current === null) throw new ChangeControlError("unchanged", `plan ${plan.key} sets no value on ${nameOf(t)}: nothing to remove`);
      after = planBinding(null, own);
      const r = removalRaise(current, own.value, own.valueBeforeKill);
      if (r.needsConfirmation)
        confirm = {
          expected: showOf(t, r.to),
          matches: (typed) =>
            typed.trim() === textOf(t, r.to) || (t.kind === "budget" && ((m) => m.ok && m.micros === r.to)(parseMoneyInput(typed, "confirmation"))),
        };
    } else {
      const preview = previewPlanValue({
        raw: textOf(t, change.value),
        of: t.kind === "budget" ? { kind: "money", currency: t.budget.currency } : { kind: "count" },
        previous: current,
        own: own.value,
        ownBeforeKill: own.valueBeforeKill,
        min: own.minValue,
        max: own.maxValue,
      });
      if (!preview.ok) throw InputError.of(preview.error);
      if (preview.unchanged) throw new ChangeControlError("unchanged", preview.message);
      after = preview.applied;
      const typed = preview.typed;
      if (preview.needsConfirmation)
        confirm = {
          expected: showOf(t, typed),
          matches: (s) => s.trim() === textOf(t, typed) || (t.kind === "budget" && ((m) => m.ok && m.micros === typed)(parseMoneyInput(s, "confirmation"))),
        };
    }
    return {
      ...none,
      change,
      before: valueBefore(current, t),
      after: { value: change.value === null ? null : after },
      summary: `plan ${plan.key} on ${nameOf(t)} ${current === null ? `none (the own ${showOf(t, before)})` : showOf(t, before)} → ${change.value === null ? `none (the own ${showOf(t, after)})` : showOf(t, after)}`,
      endpointId: t.kind === "ceiling" ? t.endpoint.id : null,
      ceilingId: t.kind === "ceiling" ? t.ceiling.id : null,
      budgetId: t.kind === "budget" ? t.budget.id : null,
      worstBefore: worstOf(t, before),
      worstAfter: worstOf(t, after),
      currency: t.kind === "budget" ? t.budget.currency : null,
      raise: after > before,
      confirm,
    };
  },
  async apply({ tx, request, actor, control }): Promise<Applied> {
    const change = parseChange(PlanValue, request.change);
    const target = targetOf(change);
    const locked = await orGone(() => lockTarget(tx, target));
    if (isGone(locked)) return { stale: locked.gone };
    const plan = await orGone(() => lockedPlan(tx, change.planKey));
    if (isGone(plan)) return { stale: plan.gone };
    const moved = movedSince(request.before, valueBefore(await valueOf(tx, plan, locked), locked));
    if (moved.length > 0) return { stale: staleMessage(moved) };
    const common = { planKey: plan.key, target, actor, reason: request.reason, changeControl: control };
    if (change.value === null) {
      const to = planBinding(null, ownOf(locked));
      await removePlanValue(tx, { ...common, confirm: textOf(locked, to) });
    } else {
      const input = textOf(locked, change.value);
      await setPlanValue(tx, { ...common, input, confirm: input });
    }
    return { stale: null, raised: null };
  },
};

// ---- plan.default --------------------------------------------------------------------------------

const PlanOnly = z.strictObject({ planKey: PlanKeyField });

async function defaultKey(db: Db): Promise<string | null> {
  const [row] = await db.select({ key: plans.key }).from(plans).where(eq(plans.isDefault, true));
  return row?.key ?? null;
}

export const planDefault: KindHandler = {
  async prepare(db, raw): Promise<Prepared> {
    const change = parseChange(PlanOnly, raw);
    const plan = await planByKey(db, change.planKey);
    if (plan.isDefault) throw new ChangeControlError("unchanged", `${plan.key} is already the default plan`);
    const was = await defaultKey(db);
    const loosens = await defaultSwitchLoosening(db, plan);
    return {
      ...none,
      change,
      before: { default: was, loosens: loosensKey(loosens) },
      after: { default: plan.key },
      summary: `default plan ${was ?? "none"} → ${plan.key}${loosens.length > 0 ? ` (looser for every account not assigned a plan: ${loosensLine(loosens)})` : ""}`,
      raise: loosens.length > 0,
    };
  },
  async apply({ tx, request, actor, control }): Promise<Applied> {
    const change = parseChange(PlanOnly, request.change);
    await lockPlanEndpoints(tx);
    const plan = await orGone(() => lockedPlan(tx, change.planKey));
    if (isGone(plan)) return { stale: plan.gone };
    const moved = movedSince(request.before, { default: await defaultKey(tx), loosens: loosensKey(await defaultSwitchLoosening(tx, plan)) });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await setDefaultPlan(tx, { planKey: plan.key, actor, reason: request.reason, changeControl: control });
    return { stale: null, raised: null };
  },
};

// ---- plan.key_assignable -------------------------------------------------------------------------

export const planKeyAssignable: KindHandler = {
  async prepare(db, raw): Promise<Prepared> {
    const change = parseChange(PlanOnly, raw);
    const plan = await planByKey(db, change.planKey);
    if (plan.keyAssignable) throw new ChangeControlError("unchanged", `${plan.key} is already assignable by key`);
    return {
      ...none,
      change,
      before: { keyAssignable: false },
      after: { keyAssignable: true },
      summary: `plan ${plan.key} assignable by key: any API key with accounts:write may then move accounts onto it, looser or not`,
      raise: true,
    };
  },
  async apply({ tx, request, actor, control }): Promise<Applied> {
    const change = parseChange(PlanOnly, request.change);
    const plan = await orGone(() => lockedPlan(tx, change.planKey));
    if (isGone(plan)) return { stale: plan.gone };
    const moved = movedSince(request.before, { keyAssignable: plan.keyAssignable });
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await setPlanKeyAssignable(tx, { planKey: plan.key, assignable: true, actor, reason: request.reason, changeControl: control });
    return { stale: null, raised: null };
  },
};

// ---- account.plan --------------------------------------------------------------------------------

const Rows = z.strictObject({
  rows: z
    .array(z.strictObject({ account: z.string().min(1).max(400), plan: PlanKeyField }), { error: "rows must be a list of {account, plan}" })
    .min(1, "at least one account")
    .max(MAX_BULK_ROWS, `at most ${MAX_BULK_ROWS} accounts`),
});
type Row = { account: string; plan: string };

/** The rows as the verbs read them; a bad row is the request's input to fix. */
function readRows(raw: unknown): Row[] {
  const { rows } = parseChange(Rows, raw);
  const seen = new Set<string>();
  return rows.map((r, i) => {
    try {
      const row = { account: parseAccountId(r.account), plan: parsePlanKey(r.plan) };
      if (seen.has(row.account)) throw InputError.of(`row ${i}: account ${row.account} is named twice`);
      seen.add(row.account);
      return row;
    } catch (error) {
      if (error instanceof AccountError || error instanceof InputError) throw InputError.of(`row ${i}: ${error.message}`);
      throw error;
    }
  });
}

/**
 * What binds the rows' accounts now: the plan each is on (null: the default), the default, and the
 * version of every plan involved (a value edited since moves what the approval agreed to).
 */
async function inForce(db: Db, rows: readonly Row[]): Promise<{ on: Record<string, string | null>; default: string | null; versions: Record<string, number> }> {
  const names = rows.map((r) => r.account);
  const found = await db
    .select({ account: accounts.account, plan: plans.key })
    .from(accounts)
    .leftJoin(plans, eq(plans.id, accounts.planId))
    .where(inArray(accounts.account, names));
  const on: Record<string, string | null> = Object.fromEntries(names.map((a) => [a, null]));
  for (const f of found) on[f.account] = f.plan;
  const dflt = await defaultKey(db);
  const keys = [...new Set([...rows.map((r) => r.plan), ...found.flatMap((f) => (f.plan ? [f.plan] : [])), ...(dflt ? [dflt] : [])])].sort();
  const versions = Object.fromEntries(
    (await db.select({ key: plans.key, version: plans.version }).from(plans).where(inArray(plans.key, keys))).map((p) => [p.key, p.version]),
  );
  return { on, default: dflt, versions };
}

function movedRows(before: Record<string, unknown>, now: Awaited<ReturnType<typeof inForce>>): string[] {
  const was = (before.on ?? {}) as Record<string, string | null>;
  const accountsMoved = Object.keys(now.on).filter((a) => (was[a] ?? null) !== now.on[a]);
  const out = accountsMoved.slice(0, 5).map((a) => `${a} on ${was[a] ?? "the default"} → ${now.on[a] ?? "the default"}`);
  if (accountsMoved.length > 5) out.push(`and ${accountsMoved.length - 5} more account(s) moved`);
  // Key by key: jsonb keeps an object's keys in its own order, so the objects are never compared whole.
  const versions = (before.versions ?? {}) as Record<string, number>;
  const changed = [...new Set([...Object.keys(versions), ...Object.keys(now.versions)])].sort().filter((k) => versions[k] !== now.versions[k]);
  for (const k of changed) out.push(`plan ${k} version ${versions[k] ?? "none"} → ${now.versions[k] ?? "none"}`);
  return [...out, ...movedSince({ default: before.default }, { default: now.default })];
}

export const accountPlan: KindHandler = {
  async prepare(db, raw): Promise<Prepared> {
    const rows = readRows(raw);
    const keys = [...new Set(rows.map((r) => r.plan))];
    const ids = new Map((await db.select({ id: plans.id, key: plans.key }).from(plans).where(inArray(plans.key, keys))).map((p) => [p.key, p.id]));
    const unknown = keys.filter((k) => !ids.has(k));
    if (unknown.length > 0) throw InputError.of(`unknown plan(s): ${unknown.join(", ")}`);
    const loose = await accountsLoosening(
      db,
      rows.map((r) => ({ account: r.account, planId: ids.get(r.plan) ?? 0 })),
    );
    const now = await inForce(db, rows);
    const first = rows[0];
    const summary =
      rows.length === 1 && first
        ? `account ${first.account}: plan ${now.on[first.account] ?? `${now.default ?? "none"} (the default)`} → ${first.plan}${loose.size > 0 ? ` (raises ${loosensLine(loose.get(first.account) ?? [])})` : ""}`
        : `${rows.length} account(s) to plan(s) ${keys.join(", ")}: ${loose.size} of them looser`;
    return { ...none, change: { rows }, before: now, after: { rows: rows.length, looser: loose.size }, summary, raise: loose.size > 0 };
  },
  async apply({ tx, request, actor, control }): Promise<Applied> {
    const rows = readRows(request.change);
    // The verb's own locks, in its order: the plans FOR SHARE, then the accounts FOR UPDATE.
    const found = await lockPlans(tx, [...new Set(rows.map((r) => r.plan))]);
    const gone = rows.find((r) => !found.has(r.plan));
    if (gone) return { stale: `plan ${gone.plan} no longer exists: nothing was applied` };
    await lockAccounts(
      tx,
      rows.map((r) => r.account),
    );
    const moved = movedRows(request.before, await inForce(tx, rows));
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await assignPlans(tx, { rows, actor, reason: request.reason, changeControl: control });
    return { stale: null, raised: null };
  },
};

// ---- account.unblock -----------------------------------------------------------------------------

const Unblock = z.strictObject({ account: z.string().min(1).max(400) });

const blockOf = (a: { blockedAt: Date | null; blockedBy: string | null; blockReason: string | null } | undefined) => ({
  blockedAt: a?.blockedAt?.toISOString() ?? null,
  blockedBy: a?.blockedBy ?? null,
  blockReason: a?.blockReason ?? null,
});

function accountOf(raw: unknown): string {
  const { account } = parseChange(Unblock, raw);
  try {
    return parseAccountId(account);
  } catch (error) {
    if (error instanceof AccountError || error instanceof InputError) throw InputError.of(error.message);
    throw error;
  }
}

export const accountUnblock: KindHandler = {
  async prepare(db, raw): Promise<Prepared> {
    const account = accountOf(raw);
    const [row] = await db.select().from(accounts).where(eq(accounts.account, account));
    if (!row?.blockedAt) throw new ChangeControlError("unchanged", `${account} is not blocked: nothing to unblock`);
    return {
      ...none,
      change: { account },
      before: blockOf(row),
      after: { blockedAt: null },
      summary: `unblock account ${account} (blocked by ${row.blockedBy ?? "unknown"}: ${row.blockReason ?? "no reason"})`,
      raise: true,
    };
  },
  async apply({ tx, request, actor, control }): Promise<Applied> {
    const account = accountOf(request.change);
    const [row] = await tx.select().from(accounts).where(eq(accounts.account, account)).for("update");
    const moved = movedSince(request.before, blockOf(row));
    if (moved.length > 0) return { stale: staleMessage(moved) };
    await unblockAccount(tx, { account, actor, reason: request.reason, changeControl: control });
    return { stale: null, raised: null };
  },
};
