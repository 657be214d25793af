import { z } from "zod";
import { EndpointKey } from "@/lib/catalog/spec";

// Fields more than one action's form carries, read the same way everywhere.

export const EndpointKeyField = z.string({ error: "endpoint is required" }).trim().pipe(EndpointKey);

/** Raising a value (adjust, bounds, overrides) needs a reason for the audit log. */
export const Reason = z.string({ error: "a reason is required" }).trim().min(1, "a reason is required: say why, for the audit log").max(500);

// Stopping spend is never held up by typing: kill and kill all take an optional reason (the audit
// log says "no reason given").
export const OptionalReason = z.string().trim().max(500).optional();
