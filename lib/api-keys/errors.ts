export type ApiKeyErrorCode = "not_found" | "already_revoked" | "unknown_endpoint" | "invalid_input";

/** A change to API keys that cannot be made, with a message fit to show staff. */
export class ApiKeyError extends Error {
  override name = "ApiKeyError";
  constructor(
    readonly code: ApiKeyErrorCode,
    message: string,
  ) {
    super(message);
  }
}
