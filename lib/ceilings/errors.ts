import { reasonError } from "@/lib/audit/reason";
import { readReason } from "@/lib/audit/reason";
import { DomainError } from "@/lib/errors";

/** What went wrong, as a code the UI and CLI can branch on and a message a person can act on. */
export type CeilingErrorCode =
  "reason_required" | "not_found" | "conflict" | "confirmation_required" | "unchanged" | "not_killed" | "already_killed" | "not_per_caller";

export class CeilingError extends DomainError<CeilingErrorCode> {
  override name = "CeilingError";
}

/** Someone else saved the ceiling first: carries what is in force now, never overwritten silently. */
export class CeilingConflictError extends CeilingError {
  override name = "CeilingConflictError";
  constructor(
    readonly currentValue: number,
    readonly currentVersion: number,
    message: string,
  ) {
    super("conflict", message);
  }
}

export function requireReason(reason: string | undefined): string {
  const read = readReason(reason, true);
  if (!read.ok) throw reasonError(read.problem, (message) => new CeilingError("reason_required", message));
  return read.text ?? "";
}

/**
 * A reason that may be left out: an emergency stop must not wait for typing. Blank is null, which
 * the audit log shows as "no reason given"; raising a value still goes through requireReason.
 */
export function optionalReason(reason: string | undefined): string | null {
  const read = readReason(reason, false);
  if (!read.ok) throw reasonError(read.problem, (message) => new CeilingError("reason_required", message));
  return read.text;
}
