import { and, asc, count, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { auditActorFields, auditOf, recordAudit, type AuditActor } from "@/lib/audit/record";
import { budgets, ceilings, limitOverrides, type NewLimitOverride } from "@/db/schema";
import { type ChangeControl, requireApproval } from "@/lib/control/context";
import { hasEnded, MAX_END_SECONDS, sameEnd } from "@/lib/control/ends";
import { formatCount } from "@/lib/format";
import type { LimitKind } from "@/lib/vocabulary";
import { lockAccounts } from "./lock-accounts";
import { planLimit } from "./loosening";
import type { OverrideTarget } from "./target";

export type { OverrideTarget } from "./target";

// One billing account's own value on a per-account limit, written once for both kinds: a
// per-caller ceiling (units or calls) and a per-account budget (micros) keep their overrides in one
// table, keyed by the limit (limit_overrides). The kind's verb locks the limit (its endpoints
// first), parses what was typed and audits; this is the rest, the same for both.
//
// Change control: an override above what binds the account now (its override, else its plan's
// value or the limit's own: ceilings.plan_limit) is a raise, and so is removing one below what
// its plan gives it; either needs a second admin. Lowering stays one person's. An override may end
// by itself (expiresAfterSeconds, on the database's clock): its end is a removal one person
// schedules now, so an ending override below what its plan gives the account is a raise too.
// Both writers lock the account's row (lockAccounts, registering it if new) after the limit and
// before reading its override or plan: a plan move (assignPlans) locks the same row, so an override
// removal and a move to a looser plan, each no raise alone, cannot both commit on what the other
// has not written yet. Lock order: endpoints, the limit, then the account (as reserve_batch).

/** What a person asks of an override, whichever the kind: the verbs add the limit's id or key. */
export type OverrideInput = {
  caller: string;
  /** Exactly what was typed: a whole number on a ceiling, money ("1.50") on a budget. */
  input: string;
  actor: AuditActor;
  reason: string;
  changeControl?: ChangeControl;
  /** The override ends by itself this long after it is saved; null or absent: until removed. */
  expiresAfterSeconds?: number | null;
};

/** A removal, whichever the kind. */
export type OverrideRemoval = Omit<OverrideInput, "input" | "expiresAfterSeconds">;

/** One override as staff read it, named by its ceiling's or budget's own id; expiresAt null: until removed. */
export type OverrideRow = { id: number; caller: string; value: number; reason: string; expiresAt: Date | null; createdAt: Date; updatedAt: Date };

/** An override binds until its end; one past it binds nothing, removed by the worker or not. */
const inForce = or(isNull(limitOverrides.expiresAt), gt(limitOverrides.expiresAt, sql`now()`));

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
      expiresAt: limitOverrides.expiresAt,
      createdAt: limitOverrides.createdAt,
      updatedAt: limitOverrides.updatedAt,
    })
    .from(limitOverrides)
    .innerJoin(o.table, eq(o.limitId, limitOverrides.limitId))
    .where(and(inArray(o.id, [...ids]), inForce))
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
    .where(and(inArray(o.id, [...ids]), inForce))
    .groupBy(o.id);
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** The account's override in force on the limit, with its end (undefined: none, or one past its end). */
async function heldOverride(db: Db, limitId: number, caller: string): Promise<{ value: number; expiresAt: Date | null } | undefined> {
  const [row] = await db
    .select({ value: limitOverrides.value, expiresAt: limitOverrides.expiresAt })
    .from(limitOverrides)
    .where(and(eq(limitOverrides.limitId, limitId), eq(limitOverrides.caller, caller), inForce));
  return row;
}

/** The account's override in force on the limit (null: none, or one past its end). */
export async function overrideOf(db: Db, limitId: number, caller: string): Promise<number | null> {
  return (await heldOverride(db, limitId, caller))?.value ?? null;
}

/** How long an override lasts, as a person reads it: "3 hours", "2 days". */
export function durationText(seconds: number): string {
  if (seconds % 86_400 === 0) return `${formatCount(seconds / 86_400)} day${seconds === 86_400 ? "" : "s"}`;
  if (seconds % 3_600 === 0) return `${formatCount(seconds / 3_600)} hour${seconds === 3_600 ? "" : "s"}`;
  return `${formatCount(seconds)} seconds`;
}

/**
 * Sets the account's override on a locked limit to `value` (already clamped to its bounds);
 * returns the value it had (null: none).
 */
export async function writeLimitOverride(
  tx: Db,
  target: OverrideTarget,
  o: { caller: string; value: number; reason: string; changeControl?: ChangeControl; expiresAfterSeconds?: number | null; expiresAt?: Date | null },
): Promise<{ previous: number | null; expiresAt: Date | null }> {
  // An end after a while (a form) or at an instant (a catalog file, kept to the instant it names).
  const at = o.expiresAt ?? null;
  const ends = at === null ? (o.expiresAfterSeconds ?? null) : Math.ceil((at.getTime() - Date.now()) / 1000);
  if (ends !== null && (!Number.isInteger(ends) || ends <= 0 || ends > MAX_END_SECONDS)) throw target.refuse("invalid_input", endRange());
  await lockAccounts(tx, [o.caller]);
  const held = await heldOverride(tx, target.limitId, o.caller);
  const existing = held?.value ?? null;
  // The same value with no end on either side, or the same instant, changes nothing; adding, moving
  // or dropping an end does.
  if (existing === o.value && ((ends === null && held?.expiresAt === null) || (at !== null && sameEnd(at, held?.expiresAt)))) {
    throw target.refuse("unchanged", `${o.caller} already has ${target.format(o.value)}: nothing to save`);
  }
  const fallback = (await planLimit(tx, { kind: target.kind, limitId: target.id, account: o.caller })) ?? target.value;
  const binding = existing ?? fallback;
  if (o.value > binding) {
    requireApproval(
      o.changeControl,
      `an override of ${target.format(o.value)} for ${o.caller} on ${target.label} (${target.format(binding)} binds it now)`,
      target.ask(o.caller, o.value, ends),
    );
  } else if (ends !== null && fallback > o.value) {
    requireApproval(
      o.changeControl,
      `an override of ${target.format(o.value)} for ${o.caller} on ${target.label} that ends after ${durationText(ends)} (the account then gets ${target.format(fallback)})`,
      target.ask(o.caller, o.value, ends),
    );
  }
  // Set to exactly what was asked, the end included: a value saved again without an end lasts.
  const expiresAt = ends === null ? null : at !== null ? at : sql`now() + make_interval(secs => ${ends})`;
  const [row] = await tx
    .insert(limitOverrides)
    .values({ limitId: target.limitId, caller: o.caller, value: o.value, reason: o.reason, expiresAt })
    .onConflictDoUpdate({
      target: [limitOverrides.limitId, limitOverrides.caller],
      set: { value: o.value, reason: o.reason, expiresAt, updatedAt: new Date() },
    })
    .returning({ expiresAt: limitOverrides.expiresAt });
  return { previous: existing, expiresAt: row?.expiresAt ?? null };
}

const endRange = () => `an override ends after 1 second to ${durationText(MAX_END_SECONDS)}, or never`;

/**
 * A new limit's overrides as a catalog file names them: one whose end has passed is left out (it
 * binds nothing), and an end is at most as far as the writer allows.
 */
export function newOverrideRows(
  limitId: number,
  list: readonly { caller: string; value: number; reason: string; until?: string }[],
  refuse: (message: string) => Error,
): NewLimitOverride[] {
  return list
    .filter((o) => !hasEnded(o.until))
    .map((o) => {
      const expiresAt = o.until === undefined ? null : new Date(o.until);
      if (expiresAt !== null && expiresAt.getTime() - Date.now() > MAX_END_SECONDS * 1000) throw refuse(endRange());
      return { limitId, caller: o.caller, value: o.value, reason: o.reason, expiresAt };
    });
}

/** Removes the account's override on a locked limit; returns the value it had. */
export async function deleteLimitOverride(tx: Db, target: OverrideTarget, o: { caller: string; changeControl?: ChangeControl }): Promise<number> {
  await lockAccounts(tx, [o.caller]);
  // Only one in force: one past its end binds nothing already (the worker removes it with its own
  // audit row), so removing it is no change, and never a loosening to approve.
  const [removed] = await tx
    .delete(limitOverrides)
    .where(and(eq(limitOverrides.limitId, target.limitId), eq(limitOverrides.caller, o.caller), inForce))
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

/** Who the audit log names for an override's end: nobody did it then; it was set to end. */
export const OVERRIDE_END_ACTOR = { type: "system", name: "override end" } as const;

type EndedRow = {
  kind: LimitKind;
  id: number;
  caller: string;
  value: string | number;
  expires_at: string | Date;
  endpoint_id: number | null;
  endpoint_key: string | null;
  budget_key: string | null;
  currency: string | null;
};

/**
 * Removes the overrides past their end, at most `limit` a call, each with its audit row in the
 * same transaction (override.expire on a ceiling, budget.override.expire on a budget): the account
 * is back on its plan's value or the limit's own, which every reservation already applied from the
 * end on. SKIP LOCKED: two workers never remove one twice, and one an edit holds waits a pass.
 */
export async function expireOverrides(db: Db, limit = 500): Promise<{ overridesEnded: number }> {
  return db.transaction(async (tx) => {
    const rows = resultRows<EndedRow>(
      await tx.execute(sql`
        with due as (
          select limit_id, caller from limit_overrides
          where expires_at <= now() order by expires_at, limit_id, caller limit ${limit} for update skip locked),
        gone as (
          delete from limit_overrides o using due
          where o.limit_id = due.limit_id and o.caller = due.caller
          returning o.limit_id, o.caller, o.value, o.expires_at)
        select l.kind, coalesce(c.id, b.id) as id, g.caller, g.value, g.expires_at,
               e.id as endpoint_id, e.key as endpoint_key, b.key as budget_key, b.currency
        from gone g join limits l on l.id = g.limit_id
        left join ceilings c on c.limit_id = l.id left join endpoints e on e.id = c.endpoint_id
        left join budgets b on b.limit_id = l.id
        order by g.expires_at, g.limit_id, g.caller`),
    );
    for (const r of rows) {
      const expiresAt = new Date(r.expires_at).toISOString();
      const common = {
        ...auditActorFields(OVERRIDE_END_ACTOR),
        previousValue: Number(r.value),
        appliedValue: null,
        clamped: false,
        reason: `the override was set to end at ${expiresAt}`,
      };
      if (r.kind === "ceiling" && r.endpoint_id !== null && r.endpoint_key !== null) {
        await recordAudit(tx, {
          ...common,
          ...auditOf(OVERRIDE_END_ACTOR, { id: r.endpoint_id, key: r.endpoint_key }, Number(r.id)),
          action: "override.expire",
          target: r.caller,
          details: { expiresAt },
        });
      } else {
        await recordAudit(tx, {
          ...common,
          action: "budget.override.expire",
          target: r.budget_key,
          details: { budgetId: Number(r.id), currency: r.currency, caller: r.caller, expiresAt },
        });
      }
    }
    return { overridesEnded: rows.length };
  });
}
