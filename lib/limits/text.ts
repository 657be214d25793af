import { z } from "zod";
import { hasControlChars } from "@/lib/canonical/caller";

/**
 * A required line of text in a spec (a name, a description line): trimmed, 1 to `max` characters,
 * no control characters, each refusal naming `what`. Endpoints, budgets and plans parse their text
 * through this one rule, so a name refused on one is refused on all.
 */
export const Text = (what: string, max: number) =>
  z
    .string({ error: `${what} is required` })
    .trim()
    .min(1, `${what} is required`)
    .max(max, `${what} must be ${max} characters or fewer`)
    .refine((s) => !hasControlChars(s), `${what} must not contain control characters`);
