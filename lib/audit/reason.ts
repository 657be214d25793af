import { InputError } from "@/lib/errors";
import { hasControlChars } from "@/lib/canonical/caller";

/** What was wrong with a reason; each domain throws it as its own error. */
export type ReasonProblem = { code: "reason_required" | "invalid_input"; message: string };

const MAX_REASON = 500;

/**
 * The reason an audited change gives, the one rule for every domain: trimmed, at most 500
 * characters, no control characters (the audit log shows it as typed). Blank is null: a caller
 * that needs one says so (`required`), an emergency stop may leave it out.
 */
export function readReason(reason: string | undefined, required: boolean): { ok: true; text: string | null } | { ok: false; problem: ReasonProblem } {
  const text = (reason ?? "").trim();
  if (text === "")
    return required
      ? { ok: false, problem: { code: "reason_required", message: "a reason is required: say why, for the audit log" } }
      : { ok: true, text: null };
  if (text.length > MAX_REASON) return { ok: false, problem: { code: "invalid_input", message: `the reason must be ${MAX_REASON} characters or fewer` } };
  if (hasControlChars(text)) return { ok: false, problem: { code: "invalid_input", message: "the reason must not contain control characters" } };
  return { ok: true, text };
}

/**
 * The error of a reason's problem: one too long or with control characters is an InputError at
 * `reason`; a missing one is the domain's own `reason_required` (`missing`).
 */
export function reasonError(problem: ReasonProblem, missing: (message: string) => Error): Error {
  return problem.code === "invalid_input" ? InputError.of(problem.message, "reason") : missing(problem.message);
}
