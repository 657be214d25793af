// The words the database's enums are made of, written once: db/schema builds its pgEnums from these
// arrays and everything else takes its types from them. No imports, so client components may read
// the values too (components/ may not import @/db/* at runtime).

/** Why a reservation was refused, in the order enforcement checks them. */
export const GATES = ["kill_switch", "per_call_max", "ceiling", "cooldown", "throttle", "unavailable"] as const;
export type Gate = (typeof GATES)[number];

export const CEILING_METRICS = ["units", "calls"] as const;
export type CeilingMetric = (typeof CEILING_METRICS)[number];

/** global: all callers together; caller: per billing account; destination: a cooldown per canonical identity. */
export const CEILING_SCOPES = ["global", "caller", "destination"] as const;
export type CeilingScope = (typeof CEILING_SCOPES)[number];

/** utc_day and billing_month follow the provider's invoice; first_hit starts at the first charge. */
export const CEILING_WINDOWS = ["utc_day", "billing_month", "first_hit"] as const;
export type CeilingWindow = (typeof CEILING_WINDOWS)[number];

/** What a cooldown's destination is, so it is folded to the right canonical form. */
export const DESTINATION_KINDS = ["email", "phone", "other"] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** An endpoint key such as `email.subscribe`; the endpoints table checks the same pattern. */
export const ENDPOINT_KEY_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
