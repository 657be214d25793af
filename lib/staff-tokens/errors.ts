import { DomainError } from "@/lib/errors";

export type StaffTokenErrorCode = "not_found" | "already_revoked" | "forbidden" | "invalid_token";

/** A personal token that cannot be made, revoked or used, with a message fit to show its owner. */
export class StaffTokenError extends DomainError<StaffTokenErrorCode> {
  override name = "StaffTokenError";
}
