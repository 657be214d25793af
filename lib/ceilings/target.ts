import type { Db } from "@/db/client";
import type { Ceiling, Endpoint } from "@/db/schema";
import { auditOf, recordAudit } from "@/lib/audit/record";
import { controlDetails } from "@/lib/control/context";
import { formatCount } from "@/lib/format";
import type { LimitTarget } from "@/lib/limits/target";
import { CeilingError } from "./errors";
import { InputError } from "@/lib/errors";
import { saveCeiling } from "./lock";

/**
 * A ceiling its verb has locked (lockCeiling), as the limits kernel's verbs see it: named by its
 * endpoint and id, counted, audited on its endpoint as `ceiling.<verb>`.
 */
export function ceilingTarget(tx: Db, ceiling: Ceiling, endpoint: Endpoint): LimitTarget {
  return {
    kind: "ceiling",
    id: ceiling.id,
    limitId: ceiling.limitId,
    value: ceiling.value,
    valueBeforeKill: ceiling.valueBeforeKill,
    defaultValue: ceiling.defaultValue,
    minValue: ceiling.minValue,
    maxValue: ceiling.maxValue,
    killedAt: ceiling.killedAt,
    killedBy: ceiling.killedBy,
    label: `${endpoint.key} #${ceiling.id}`,
    format: formatCount,
    ask: (caller, value, ends) => ({
      kind: "ceiling.override",
      change: { ceilingId: ceiling.id, caller, value, ...(ends ? { expiresAfterSeconds: ends } : {}) },
    }),
    askValue: (value) => ({ kind: "ceiling.value", change: { ceilingId: ceiling.id, value } }),
    askBounds: ({ min, max }) => ({ kind: "ceiling.bounds", change: { ceilingId: ceiling.id, min, max } }),
    refuse: (code, message, path) => (code === "invalid_input" ? InputError.of(message, path) : new CeilingError(code, message)),
    save: (fields) => saveCeiling(tx, ceiling.id, fields),
    audit: (change, event) =>
      recordAudit(tx, {
        ...auditOf(change.actor, endpoint, ceiling.id),
        action: `ceiling.${event.verb}`,
        rawInput: event.rawInput,
        previousValue: event.previousValue,
        appliedValue: event.appliedValue,
        clamped: event.clamped,
        reason: change.reason,
        details: { ...event.details, ...controlDetails(change.changeControl), ...change.details },
      }),
  };
}
