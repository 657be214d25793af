import { DomainError } from "@/lib/errors";

/** What went wrong with a usage source's pull or import: a code to branch on, a message to act on. */
export type ReconciliationErrorCode =
  | "not_found"
  | "bad_file"
  | "wrong_kind"
  | "no_location"
  | "credential_missing"
  | "provider_error"
  | "host_refused"
  | "provider_shape"
  | "currency_mismatch"
  | "day_mismatch";

/** One refused line of a usage file: 1-based line (a JSON file's row index; 0 for the file as a whole). */
export type BadLine = { line: number; reason: string };

export class ReconciliationError extends DomainError<ReconciliationErrorCode> {
  override name = "ReconciliationError";
  constructor(
    code: ReconciliationErrorCode,
    message: string,
    /** On bad_file: every refused line with its reason. */
    readonly lines: BadLine[] = [],
  ) {
    super(code, message);
  }
}
