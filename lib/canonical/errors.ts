export type DestinationErrorCode = "empty" | "invalid_email" | "invalid_phone";

/** A destination that cannot be folded to a key: the caller must fix it, it is not a refusal. */
export class InvalidDestinationError extends Error {
  override name = "InvalidDestinationError";
  constructor(
    readonly code: DestinationErrorCode,
    message: string,
  ) {
    super(message);
  }
}
