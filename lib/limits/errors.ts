import { reasonError } from "@/lib/audit/reason";
import type { z } from "zod";
import { readReason } from "@/lib/audit/reason";
import { DomainError, InputError, type Issue, issueLine } from "@/lib/errors";

export { InputError, type Issue, issueLine } from "@/lib/errors";

/** What went wrong with a catalog change: a code to branch on, a message a person can act on. */
export type CatalogErrorCode =
  | "reason_required"
  | "not_found"
  | "duplicate_key"
  | "conflict"
  | "confirmation_required"
  | "last_global_ceiling"
  | "archived"
  | "unchanged"
  // A plan that accounts are on, or the default plan: not deleted (lib/plans).
  | "in_use"
  // A plan value on a global ceiling or budget: plans set per-caller and per-account values only.
  | "not_per_caller";

export class CatalogError extends DomainError<CatalogErrorCode> {
  override name = "CatalogError";
}

/** The error for problems found in an input: its message lists them all, each said once. */
export function invalidInput(problems: readonly Issue[], separator = "; "): InputError {
  return new InputError(problems, problems.map(issueLine).join(separator));
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
  const read = readReason(reason, true);
  if (!read.ok) throw reasonError(read.problem, (message) => new CatalogError("reason_required", message));
  return read.text ?? "";
}

/** Every problem with its path in the file's own terms (`endpoints[2].ceilings[0].max`). */
export function zodIssues(error: z.ZodError): Issue[] {
  return error.issues.map((i) => ({
    path: i.path.reduce<string>((acc, part) => (typeof part === "number" ? `${acc}[${part}]` : acc ? `${acc}.${String(part)}` : String(part)), ""),
    message: i.message,
  }));
}
