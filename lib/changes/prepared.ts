import type { Db } from "@/db/client";
import type { ChangeRequest } from "@/db/schema";
import type { AuditActor } from "@/lib/audit/record";
import type { ChangeControl } from "@/lib/control/context";

// What each kind of request knows how to do: `prepare` reads what is in force when it is asked
// (before, after, the worst case both ways, a one-line summary, whether it is a raise), `apply`
// takes the same locks as the direct edit, compares `before` with what is in force and, only if
// nothing moved, applies the change through the direct edit's own write code.

/** A worst case a day: units (null when the kind counts money only) and micros of `currency`. */
export type Worst = { units: number | null; micros: number | null };

export type Prepared = {
  change: Record<string, unknown>;
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  summary: string;
  endpointId: number | null;
  ceilingId: number | null;
  budgetId: number | null;
  worstBefore: Worst | null;
  worstAfter: Worst | null;
  currency: string | null;
  raise: boolean;
  /** A raise of 5x or more is typed twice: what the confirmation must say. */
  confirm: { expected: string; matches: (typed: string) => boolean } | null;
  /** A value raise may carry an end; other kinds may not. */
  mayEnd: boolean;
  /** Why this raise may not carry an end although its kind may (a killed ceiling or budget). */
  endRefused?: string;
};

/**
 * A raise of a killed ceiling or budget may not end: its end would put back a kill remembering the
 * raised value (one restore would keep the raise). Restoring first is instant; then ask again.
 */
export const KILLED_NO_END = "it is killed: a raise of a killed value cannot carry an end; restore it first, then ask for a raise that ends";

export function isKilled(v: { value: number; valueBeforeKill: number | null }): boolean {
  return v.value === 0 && v.valueBeforeKill !== null;
}

export function hasEnd(r: Pick<ChangeRequest, "endsAfterSeconds" | "endsAt">): boolean {
  return r.endsAfterSeconds !== null || r.endsAt !== null;
}

/** What an applied value raise puts back at its end (timing's recordRaiseEnd). */
/** `raisedVersion`: the row's version right after the raise was written (the end reverts only while it holds). */
export type RaisedValue = { endpointId: number | null; ceilingId?: number; budgetId?: number; revertTo: number; raisedTo: number; raisedVersion: number };

export type Applied = { stale: string } | { stale: null; raised: RaisedValue | null };

export type ApplyContext = { tx: Db; request: ChangeRequest; actor: AuditActor; control: ChangeControl };

export type KindHandler = {
  prepare: (db: Db, change: Record<string, unknown>) => Promise<Prepared>;
  apply: (c: ApplyContext) => Promise<Applied>;
};

const show = (v: unknown) => (v === null || v === undefined ? "none" : typeof v === "object" ? JSON.stringify(v) : String(v));

/**
 * What moved since the request was asked: each field of `before` whose value in force differs,
 * as "value 100 → 80". Empty: nothing moved.
 */
export function movedSince(before: Record<string, unknown>, now: Record<string, unknown>): string[] {
  return Object.keys(before)
    .filter((k) => JSON.stringify(before[k]) !== JSON.stringify(now[k]))
    .map((k) => `${k} ${show(before[k])} → ${show(now[k])}`);
}

export function staleMessage(moved: string[]): string {
  return `what was in force changed since it was asked (${moved.join("; ")}): nothing was applied; ask again against what is in force now`;
}
