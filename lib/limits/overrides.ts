import { and, asc, count, eq, inArray } from "drizzle-orm";
import type { Db } from "@/db/client";
import { budgets, ceilings, limitOverrides } from "@/db/schema";
import type { ChangeKind } from "@/lib/control/change-kinds";
import { type ChangeControl, requireApproval } from "@/lib/control/context";
import type { LimitKind } from "@/lib/vocabulary";
import { lockAccounts } from "./lock-accounts";
import { planLimit } from "./loosening";

// One billing account's own value on a per-account limit, written once for both kinds: a
// per-caller ceiling (units or calls) and a per-account budget (micros) keep their overrides in one
// table, keyed by the limit (limit_overrides). The kind's verb locks the limit (its endpoints
// first), parses what was typed and audits; this is the rest, the same for both.
//
// Change control: an override above what binds the account now (its override, else its plan's
// value or the limit's own: ceilings.plan_limit) is a raise, and so is removing one below what
// its plan gives it; either needs a second admin. Lowering stays one person's.
// Both writers lock the account's row (lockAccounts, registering it if new) after the limit and
// before reading its override or plan: a plan move (assignPlans) locks the same row, so an override
// removal and a move to a looser plan, each no raise alone, cannot both commit on what the other
// has not written yet. Lock order: endpoints, the limit, then the account (as reserve_batch).

/** A per-account limit, locked by the caller, as its overrides see it. */
export type OverrideTarget = {
  kind: LimitKind;
  /** The ceiling's or budget's id. */
  id: number;
  /** Its row in limits: what its overrides are keyed by. */
  limitId: number;
  /** Its own value: what binds an account with neither an override nor a plan value. */
  value: number;
  /** How a person names it: `llm.chat #3`, `budget team-llm`. */
  label: string;
  /** A value in the limit's measure, as a person reads it. */
  format: (value: number) => string;
  /** The change request that would make this change, when it is a raise. */
  ask: (caller: string, value: number | null) => { kind: ChangeKind; change: Record<string, unknown> };
  /** The kind's own error for an override that is already so, or is not there. */
  refuse: (code: "unchanged" | "not_found", message: string) => Error;
};

/** One override as staff read it, named by its ceiling's or budget's own id. */
export type OverrideRow = { id: number; caller: string; value: number; reason: string; createdAt: Date; updatedAt: Date };

function owner(kind: LimitKind) {
  return kind === "ceiling" ? { id: ceilings.id, limitId: ceilings.limitId, table: ceilings } : { id: budgets.id, limitId: budgets.limitId, table: budgets };
}

/** The overrides of the ceilings or budgets named, in (id, caller) order; at most `limit` rows. */
export async function listOverrides(db: Db, kind: LimitKind, ids: readonly number[], opts: { limit?: number } = {}): Promise<OverrideRow[]> {
  if (ids.length === 0) return [];
  const o = owner(kind);
  const query = db
    .select({
      id: o.id,
      caller: limitOverrides.caller,
      value: limitOverrides.value,
      reason: limitOverrides.reason,
      createdAt: limitOverrides.createdAt,
      updatedAt: limitOverrides.updatedAt,
    })
    .from(limitOverrides)
    .innerJoin(o.table, eq(o.limitId, limitOverrides.limitId))
    .where(inArray(o.id, [...ids]))
    .orderBy(asc(o.id), asc(limitOverrides.caller));
  return opts.limit === undefined ? query : query.limit(opts.limit);
}

/** How many overrides each of the ceilings or budgets named has (absent: none). */
export async function countOverrides(db: Db, kind: LimitKind, ids: readonly number[]): Promise<Map<number, number>> {
  if (ids.length === 0) return new Map();
  const o = owner(kind);
  const rows = await db
    .select({ id: o.id, n: count() })
    .from(limitOverrides)
    .innerJoin(o.table, eq(o.limitId, limitOverrides.limitId))
    .where(inArray(o.id, [...ids]))
    .groupBy(o.id);
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** The account's override on the limit (null: none). */
export async function overrideOf(db: Db, limitId: number, caller: string): Promise<number | null> {
  const [row] = await db
    .select({ value: limitOverrides.value })
    .from(limitOverrides)
    .where(and(eq(limitOverrides.limitId, limitId), eq(limitOverrides.caller, caller)));
  return row?.value ?? null;
}

/**
 * Sets the account's override on a locked limit to `value` (already clamped to its bounds);
 * returns the value it had (null: none).
 */
export async function writeLimitOverride(
  tx: Db,
  target: OverrideTarget,
  o: { caller: string; value: number; reason: string; changeControl?: ChangeControl },
): Promise<number | null> {
  await lockAccounts(tx, [o.caller]);
  const existing = await overrideOf(tx, target.limitId, o.caller);
  if (existing === o.value) throw target.refuse("unchanged", `${o.caller} already has ${target.format(o.value)}: nothing to save`);
  const binding = existing ?? (await planLimit(tx, { kind: target.kind, limitId: target.id, account: o.caller })) ?? target.value;
  if (o.value > binding) {
    requireApproval(
      o.changeControl,
      `an override of ${target.format(o.value)} for ${o.caller} on ${target.label} (${target.format(binding)} binds it now)`,
      target.ask(o.caller, o.value),
    );
  }
  await tx
    .insert(limitOverrides)
    .values({ limitId: target.limitId, caller: o.caller, value: o.value, reason: o.reason })
    .onConflictDoUpdate({
      target: [limitOverrides.limitId, limitOverrides.caller],
      set: { value: o.value, reason: o.reason, updatedAt: new Date() },
    });
  return existing;
}

/** Removes the account's override on a locked limit; returns the value it had. */
export async function deleteLimitOverride(tx: Db, target: OverrideTarget, o: { caller: string; changeControl?: ChangeControl }): Promise<number> {
  await lockAccounts(tx, [o.caller]);
  const [removed] = await tx
    .delete(limitOverrides)
    .where(and(eq(limitOverrides.limitId, target.limitId), eq(limitOverrides.caller, o.caller)))
    .returning({ value: limitOverrides.value });
  if (!removed) throw target.refuse("not_found", `${o.caller} has no override on ${target.label}`);
  // Read after the delete, in the same transaction: what binds the account from its plan now.
  const plan = (await planLimit(tx, { kind: target.kind, limitId: target.id, account: o.caller })) ?? target.value;
  if (plan > removed.value) {
    requireApproval(
      o.changeControl,
      `removing ${o.caller}'s override of ${target.format(removed.value)} on ${target.label} (its plan gives it ${target.format(plan)})`,
      target.ask(o.caller, null),
    );
  }
  return removed.value;
}
