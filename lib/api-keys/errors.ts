import { DomainError } from "@/lib/errors";

export type ApiKeyErrorCode = "not_found" | "already_revoked" | "unknown_endpoint";

/** A change to API keys that cannot be made, with a message fit to show staff. */
export class ApiKeyError extends DomainError<ApiKeyErrorCode> {
  override name = "ApiKeyError";
}
