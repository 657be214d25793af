// The words the database's enums are made of, written once: db/schema builds its pgEnums from these
// arrays and everything else takes its types from them. No imports, so client components may read
// the values too (components/ may not import @/db/* at runtime).

/** Why a reservation was refused, in the order enforcement checks them. */
export const GATES = ["kill_switch", "per_call_max", "ceiling", "cooldown", "throttle", "unavailable", "budget", "blocked"] as const;
export type Gate = (typeof GATES)[number];

/**
 * Why the server failed closed (gate `unavailable`, HTTP 503): its deadline passed, the database
 * timed out a statement or a lock, a deadlock or serialization failure, no connection, a commit
 * not confirmed by a synchronous standby, functions missing or of another contract version, a
 * reservation another call holds right now (settle, release), or none of these.
 */
export const UNAVAILABLE_REASONS = [
  "deadline",
  "statement_timeout",
  "lock_timeout",
  "deadlock",
  "serialization",
  "connection",
  "unreplicated",
  "not_configured",
  "contract_version",
  "locked",
  "unknown",
] as const;
export type UnavailableReason = (typeof UNAVAILABLE_REASONS)[number];

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

/**
 * Why a value binds one account on a per-caller ceiling (or per-account budget, where "ceiling"
 * reads "budget"): its own value, the account's plan, its override, a kill, a block
 * (db/functions/caller_limit.sql decides).
 */
export const LIMIT_SOURCES = ["ceiling", "plan", "override", "kill", "blocked"] as const;
export type LimitSource = (typeof LIMIT_SOURCES)[number];

/** The two kinds of one limit: a ceiling (units or calls of one endpoint) and a budget (money over several). */
export const LIMIT_KINDS = ["ceiling", "budget"] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

/** A budget counts for everyone together (global) or for each billing account on its own. */
export const BUDGET_SCOPES = ["global", "account"] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

/** A budget's window: the calendar windows of ceilings (a budget has no first-hit window). */
export const BUDGET_WINDOWS = ["utc_day", "billing_month"] as const;
export type BudgetWindow = (typeof BUDGET_WINDOWS)[number];

/**
 * One priced part of an endpoint's calls (input tokens, output tokens; or the one part `units`).
 * pricePico: the price of one unit in millionths of a micro, 10^-12 of the currency: $2.50 per
 * million tokens is 2,500,000; $0.0079 an SMS is 7,900,000,000.
 */
export type EndpointPart = { name: string; pricePico: number };
/** The part every single-priced endpoint has; a request's `amount` is its units. */
export const DEFAULT_PART = "units";
export const MAX_PARTS = 8;
/** A part's name: `input`, `output`, `cached-input`. */
export const PART_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * The own keys of a parts object that no part can be named: a zod record skips `__proto__`
 * silently (it would set the object's prototype), so parts are checked for these first and a bad
 * name is refused, never dropped, by the library and HTTP alike, as the database refuses it.
 */
function unnamedParts(raw: unknown): string[] {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return [];
  return Object.keys(raw).filter((k) => !PART_NAME_PATTERN.test(k));
}

/** For z.preprocess before a parts record: an issue for each own key no part can be named (vocabulary only: no zod here). */
export function refuseUnnamedParts(message: (name: string) => string) {
  return (raw: unknown, ctx: { addIssue: (issue: { code: "custom"; message: string; path: string[]; input: unknown }) => void }): unknown => {
    for (const name of unnamedParts(raw)) ctx.addIssue({ code: "custom", message: message(name), path: [name], input: raw });
    return raw;
  };
}
/** Millionths of a micro in one micro: prices are per unit in picos, money in whole micros. */
export const PICOS_PER_MICRO = 1_000_000;
/** The dearest price a unit may have: $1,000 (10^15 picos), so sums stay exact in a double. */
export const MAX_PRICE_PICO = 1_000_000_000_000_000;
