import { hasControlChars } from "@/lib/canonical/caller";
import { DomainError } from "@/lib/errors";

/** What went wrong with a catalog change: a code to branch on, a message a person can act on. */
export type CatalogErrorCode =
  | "invalid_input"
  | "reason_required"
  | "not_found"
  | "duplicate_key"
  | "conflict"
  | "confirmation_required"
  | "last_global_ceiling"
  | "archived"
  | "unchanged";

export class CatalogError extends DomainError<CatalogErrorCode> {
  override name = "CatalogError";
  constructor(
    code: CatalogErrorCode,
    message: string,
    /** Per field (`ceilings[1].max`) where the input had several problems. */
    readonly issues: string[] = [],
  ) {
    super(code, message);
  }
}

/** Someone else saved the endpoint first; carries the version in force so the form can reload it. */
export class CatalogConflictError extends CatalogError {
  override name = "CatalogConflictError";
  constructor(
    readonly currentVersion: number,
    message: string,
  ) {
    super("conflict", message);
  }
}

export function requireCatalogReason(reason: string | undefined): string {
  const text = (reason ?? "").trim();
  if (text === "") throw new CatalogError("reason_required", "a reason is required: say why, for the audit log");
  if (text.length > 500) throw new CatalogError("invalid_input", "the reason must be 500 characters or fewer");
  if (hasControlChars(text)) throw new CatalogError("invalid_input", "the reason must not contain control characters");
  return text;
}
