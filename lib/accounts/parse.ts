import { CallerKey } from "@/lib/ceilings/overrides";
import { hasControlChars } from "@/lib/canonical";
import { ENDPOINT_KEY_PATTERN } from "@/lib/vocabulary";
import { AccountError } from "./errors";

/** The most rows one bulk assignment takes: past it the whole body is refused before any read. */
export const MAX_BULK_ROWS = 10_000;

/**
 * A billing account as every boundary reads it (CallerKey: trimmed of whitespace, 1 to 200
 * characters, no control character), so an assignment names the same account the counters,
 * overrides and refusals of enforcement name. Throws AccountError("invalid_input").
 */
export function parseAccountId(raw: string): string {
  const parsed = CallerKey.safeParse(raw);
  if (!parsed.success) throw new AccountError("invalid_input", parsed.error.issues[0]?.message ?? "invalid billing account");
  return parsed.data;
}

/**
 * A plan's key as typed: trimmed, then a plan key's shape. A key of another shape names no plan
 * (plans.key has the endpoint key's CHECK), so it is refused as unknown with what was typed.
 */
export function parsePlanKey(raw: string): string {
  const key = raw.trim();
  if (key === "") throw new AccountError("invalid_input", "the plan is required");
  if (hasControlChars(key)) throw new AccountError("invalid_input", "the plan must not contain control characters");
  if (!ENDPOINT_KEY_PATTERN.test(key)) throw new AccountError("unknown_plan", `unknown plan '${key.slice(0, 64)}'`);
  return key;
}
