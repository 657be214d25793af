import { readReason, reasonError } from "@/lib/audit/reason";
import { DomainError } from "@/lib/errors";

/** What went wrong with an account verb, as a code the API, the CLI and the dashboard branch on. */
/** invalid_rows: rows of a bulk body refused (`rows` names them); the API answers the same code. */
export type AccountErrorCode = "invalid_rows" | "unknown_plan" | "too_many" | "not_found" | "unchanged" | "reason_required" | "plan_not_key_assignable";

/** One refused row of a bulk assignment: where it is in the body, the account as sent, and why. */
export type RowProblem = { index: number; account: string; code: "invalid_input" | "unknown_plan" | "duplicate_account" | "loosens"; message: string };

/** How many refused rows an error names: a body of 10,000 bad rows must not answer megabytes. */
export const MAX_NAMED_ROWS = 100;

export class AccountError extends DomainError<AccountErrorCode> {
  override name = "AccountError";
  constructor(
    code: AccountErrorCode,
    message: string,
    /** A bulk body's refused rows, the first MAX_NAMED_ROWS of them in body order. */
    readonly rows: RowProblem[] = [],
    /** How many rows were refused in all (rows may name fewer). */
    readonly rowCount = rows.length,
  ) {
    super(code, message);
  }
}

export function requireReason(reason: string | undefined): string {
  const read = readReason(reason, true);
  if (!read.ok) throw reasonError(read.problem, (message) => new AccountError("reason_required", message));
  return read.text ?? "";
}

export function optionalReason(reason: string | undefined): string | null {
  const read = readReason(reason, false);
  if (!read.ok) throw reasonError(read.problem, (message) => new AccountError("reason_required", message));
  return read.text;
}
