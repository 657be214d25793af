/** A typed failure of an alerts operation, with a message fit to show to staff. */
export class AlertError extends Error {
  override name = "AlertError";
  constructor(
    readonly code: "not_found" | "invalid_input",
    message: string,
  ) {
    super(message);
  }
}
