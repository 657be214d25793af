import { DomainError } from "@/lib/errors";

export type StaffAdminErrorCode = "not_found" | "exists" | "last_admin";

/** A staff change that was refused for a reason the person asking can act on. */
export class StaffAdminError extends DomainError<StaffAdminErrorCode> {
  override name = "StaffAdminError";
}
