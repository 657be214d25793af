import { DomainError } from "@/lib/errors";
import type { ChangeKind } from "./change-kinds";

/** What went wrong with a change request: a code the UI and CLI branch on, a message to act on. */
export type ChangeControlErrorCode =
  | "forbidden"
  | "own_request"
  | "not_found"
  | "not_pending"
  | "expired"
  | "stale"
  | "reason_required"
  | "unchanged"
  | "not_a_raise"
  | "confirmation_required"
  | "approval_required";

/** What to ask for instead: the kind and change a refused direct raise would be as a request. */
export type AskInstead = { kind: ChangeKind; change: Record<string, unknown> };

export class ChangeControlError extends DomainError<ChangeControlErrorCode> {
  override name = "ChangeControlError";
  constructor(
    code: ChangeControlErrorCode,
    message: string,
    /** On approval_required: the request that would make this change (requestChange's kind and change). */
    readonly ask?: AskInstead,
  ) {
    super(code, message);
  }
}
