import { DomainError } from "@/lib/errors";

export type DestinationErrorCode = "empty" | "invalid_email" | "invalid_phone";

/** A destination that cannot be folded to a key: the caller must fix it, it is not a refusal. */
export class InvalidDestinationError extends DomainError<DestinationErrorCode> {
  override name = "InvalidDestinationError";
}
