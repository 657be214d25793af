import type { AuditActor } from "@/lib/audit/record";
import type { ChangeControl } from "@/lib/control/context";

/** What a person's edit of a limit's value carries, whichever kind of limit: the ceiling's or the budget's verb adds which one. */
export type AdjustLimitInput = {
  /** Exactly what the person typed (a count, or money such as "1.50"): stored in the audit row as typed. */
  input: string;
  /** The version the person saw; a different one in the database is a conflict. */
  expectedVersion: number;
  actor: AuditActor;
  reason: string;
  /** The value typed a second time, required for a raise to CONFIRM_RAISE_FACTOR times or more. */
  confirm?: string;
  /** A raise needs one (lib/control/context.ts): only an approved request or setup code has it. */
  changeControl?: ChangeControl;
};
