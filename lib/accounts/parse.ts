import { InputError } from "@/lib/errors";
import { CallerKey } from "@/lib/canonical/caller";
import { hasControlChars } from "@/lib/canonical";
import { ENDPOINT_KEY_PATTERN } from "@/lib/vocabulary";

/** The most rows one bulk assignment takes: past it the whole body is refused before any read. */
export const MAX_BULK_ROWS = 10_000;

/**
 * A billing account as every boundary reads it (CallerKey: trimmed of whitespace, 1 to 200
 * characters, no control character), so an assignment names the same account the counters,
 * overrides and refusals of enforcement name. Throws AccountError("invalid_input").
 */
export function parseAccountId(raw: string): string {
  const parsed = CallerKey.safeParse(raw);
  if (!parsed.success) throw InputError.of(parsed.error.issues[0]?.message ?? "invalid billing account");
  return parsed.data;
}

/**
 * A plan's key as typed: trimmed, then a plan key's shape (plans.key has the endpoint key's CHECK).
 * Another shape is an input error; a well-formed key that names no plan is `unknown_plan`, decided
 * against the plans table by the verb.
 */
export function parsePlanKey(raw: string): string {
  const key = raw.trim();
  if (key === "") throw InputError.of("the plan is required");
  if (hasControlChars(key)) throw InputError.of("the plan must not contain control characters");
  if (!ENDPOINT_KEY_PATTERN.test(key)) {
    throw InputError.of("the plan must be a plan's key: 1 to 64 lower case letters, digits, '.', '_' or '-', starting with a letter or digit");
  }
  return key;
}
