import { z } from "zod";
import { EndpointKey } from "@/lib/catalog/spec";
import { MAX_END_SECONDS } from "@/lib/control/ends";

// Fields more than one action's form carries, read the same way everywhere.

export const EndpointKeyField = z.string({ error: "endpoint is required" }).trim().pipe(EndpointKey);

/** Raising a value (adjust, bounds, overrides) needs a reason for the audit log. */
export const Reason = z.string({ error: "a reason is required" }).trim().min(1, "a reason is required: say why, for the audit log").max(500);

// Stopping spend is never held up by typing: kill and kill all take an optional reason (the audit
// log says "no reason given").
export const OptionalReason = z.string().trim().max(500).optional();

const MAX_END_HOURS = MAX_END_SECONDS / 3_600;

/**
 * When an override ends by itself, typed as whole hours from now (empty: it lasts until someone
 * removes it); read as its length in seconds, or null.
 */
export const OverrideEndHours = z
  .string()
  .trim()
  .max(16, "the end is too long")
  .optional()
  .transform((raw, ctx): number | null => {
    if (raw === undefined || raw === "") return null;
    if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_END_HOURS) {
      ctx.addIssue({ code: "custom", message: `an override ends after 1 to ${MAX_END_HOURS} whole hours, or is left empty to last` });
      return z.NEVER;
    }
    return Number(raw) * 3_600;
  });
