import type { AuditActor } from "@/lib/audit/record";
import type { NewAuditEvent } from "@/db/schema/audit-events";
import type { ChangeKind } from "@/lib/control/change-kinds";
import type { ChangeControl } from "@/lib/control/context";
import type { LimitKind } from "@/lib/vocabulary";

// A ceiling or a budget, locked by its kind's verb, as the kernel's verbs see it (value, kill and
// restore, bounds, overrides): the fields both rows share, how a person names it and reads its
// values, and how the kind writes and audits it. The kind builds one (ceilingTarget,
// budgetTarget); everything a verb decides is written once, here in lib/limits.

/** The limit's fields a verb of the kernel writes, as its next version. */
export type LimitFields = {
  value?: number;
  valueBeforeKill?: number | null;
  defaultValue?: number;
  minValue?: number;
  maxValue?: number;
  killedAt?: Date | null;
  killedBy?: string | null;
  updatedAt?: Date;
};

/** Who makes a change and why, whichever the verb: `details` joins its audit row's (a schedule, a raise end). */
export type LimitChange = {
  actor: AuditActor;
  reason: string | null;
  changeControl?: ChangeControl;
  details?: Record<string, unknown>;
};

/** One audit event of a change to a limit; the kind adds who it names (its endpoint, or its key) and the action's prefix. */
export type LimitEvent = Pick<NewAuditEvent, "rawInput" | "previousValue" | "appliedValue" | "clamped"> & {
  /** After the kind's prefix: `kill` is audited as `ceiling.kill` or `budget.kill`. */
  verb: "adjust" | "kill" | "restore" | "bounds";
  details: Record<string, unknown>;
};

/** The codes a verb of the kernel refuses with, in the kind's own error class. */
export type RefusalCode = "unchanged" | "not_found" | "invalid_input" | "confirmation_required";

/** A per-account limit as its overrides see it: only what an override reads and writes. */
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
  /** The change request that would set this override, when it is a raise. */
  ask: (caller: string, value: number | null, expiresAfterSeconds?: number | null) => { kind: ChangeKind; change: Record<string, unknown> };
  /** The kind's own error for what a verb refuses; `path` names the field where one does. */
  refuse: (code: RefusalCode, message: string, path?: string) => Error;
};

/** A ceiling or a budget, locked, as every verb of the kernel sees it. */
export type LimitTarget = OverrideTarget & {
  valueBeforeKill: number | null;
  defaultValue: number;
  minValue: number;
  maxValue: number;
  killedAt: Date | null;
  killedBy: string | null;
  /** Money in this currency (a budget); absent: a count (a ceiling). */
  currency?: string;
  /** The change requests that would make a value or bounds change, when it is a raise. */
  askValue: (typed: number) => { kind: ChangeKind; change: Record<string, unknown> };
  askBounds: (bounds: { min: number; max: number }) => { kind: ChangeKind; change: Record<string, unknown> };
  /** Writes fields of the locked limit as its next version; returns that version. */
  save: (fields: LimitFields) => Promise<number>;
  /** Appends the audit row of a change to it, in the transaction that makes the change. */
  audit: (change: LimitChange, event: LimitEvent) => Promise<void>;
};
