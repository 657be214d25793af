import { z } from "zod";
import { canonicalCaller, hasControlChars, hasLoneSurrogate } from "@/lib/canonical/caller";
import { DomainError } from "@/lib/errors";

import {
  type BudgetScope,
  type BudgetWindow,
  type CeilingMetric,
  type CeilingScope,
  type CeilingWindow,
  type Gate,
  PART_NAME_PATTERN,
  type UnavailableReason,
  refuseUnnamedParts,
} from "@/lib/vocabulary";

/** A string the database can take: no control characters (NUL would fail the whole batch), no lone surrogate. */
function text(min: number, max: number) {
  return z
    .string()
    .min(min)
    .max(max)
    .refine((v) => !hasControlChars(v), "must not contain control characters")
    .refine((v) => !hasLoneSurrogate(v), "must not contain a lone surrogate (an unpaired \\ud800-\\udfff is no character)");
}

// The longest each text field may be, and a TTL's range: read by the schema below and by
// plainReserveParams, which must take no value the schema refuses.
const MAX_LENGTH = { endpoint: 64, caller: 200, destination: 320, idempotencyKey: 200, requestId: 100 } as const;
const TTL_SECONDS = { min: 1, max: 86_400 } as const;

/** A billing account: trimmed of Unicode whitespace, then no control characters (canonicalCaller). */
export const Caller = z.string().transform(canonicalCaller).pipe(text(1, MAX_LENGTH.caller));

const Units = z.number({ error: "must be a number" }).int("must be a whole number").min(0, "must be zero or more").max(Number.MAX_SAFE_INTEGER, "is too large");

/**
 * Units per priced part ({ input: 1200, output: 800 }): every part of the endpoint, each whole,
 * zero or more; the database checks the names against the endpoint's parts.
 */
export const Parts = z.preprocess(
  refuseUnnamedParts(() => "a part's name is like input or output"),
  z.record(z.string().regex(PART_NAME_PATTERN, "a part's name is like input or output"), Units, { error: "parts must be an object of units per part" }),
);
export type Parts = z.infer<typeof Parts>;

// Parsed at the library's boundary; the SQL function validates again for callers in other languages.
export const ReserveParams = z
  .object({
    endpoint: text(1, MAX_LENGTH.endpoint),
    /** The units of the call; for an endpoint priced part by part, send `parts` instead (or both, equal). */
    amount: z
      .number({ error: "amount must be a number" })
      .int("amount must be a whole number")
      .positive("amount must be positive")
      .max(Number.MAX_SAFE_INTEGER, "amount is too large")
      .optional(),
    parts: Parts.optional(),
    caller: Caller.optional(),
    destination: text(1, MAX_LENGTH.destination).optional(),
    /** The canonical identity for the cooldown; derived from destination when absent. */
    destinationKey: text(1, MAX_LENGTH.destination).optional(),
    idempotencyKey: text(1, MAX_LENGTH.idempotencyKey).optional(),
    ttlSeconds: z.number().int().min(TTL_SECONDS.min).max(TTL_SECONDS.max).optional(),
    requestId: text(0, MAX_LENGTH.requestId).optional(),
  })
  .refine((p) => p.amount !== undefined || p.parts !== undefined, { path: ["amount"], message: "amount (or parts) is required" });
export type ReserveParams = z.input<typeof ReserveParams>;

// Printable ASCII with no space at either end, as most endpoints, callers and keys are: such a
// string is its own canonical form (canonicalCaller trims nothing from it) and holds no control
// character or lone surrogate, so no check of ReserveParams can fail on it but its length.
const PLAIN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

const plain = (value: unknown, max: number): value is string => typeof value === "string" && value.length <= max && PLAIN.test(value);

/**
 * The common call (an endpoint and a whole amount, with a caller, idempotency key, TTL or request
 * id of the plain kind) as ReserveParams parses it, without walking its schema: zod's walk was a
 * tenth of the library's own work a request (some 1.1 µs of it, measured 2026-12-07). Any other
 * call (parts, a destination, a value to trim, refuse or read otherwise) is undefined here and
 * goes to ReserveParams, whose errors are the contract's. plain-params.test.ts holds the two to
 * the same output.
 */
export function plainReserveParams(params: unknown): z.output<typeof ReserveParams> | undefined {
  if (typeof params !== "object" || params === null || Array.isArray(params)) return undefined;
  const { endpoint, amount, parts, caller, destination, destinationKey, idempotencyKey, ttlSeconds, requestId } = params as Record<string, unknown>;
  if (parts !== undefined || destination !== undefined || destinationKey !== undefined) return undefined;
  if (!plain(endpoint, MAX_LENGTH.endpoint) || typeof amount !== "number" || !Number.isSafeInteger(amount) || amount <= 0) return undefined;
  if (caller !== undefined && !plain(caller, MAX_LENGTH.caller)) return undefined;
  if (idempotencyKey !== undefined && !plain(idempotencyKey, MAX_LENGTH.idempotencyKey)) return undefined;
  if (
    ttlSeconds !== undefined &&
    !(typeof ttlSeconds === "number" && Number.isInteger(ttlSeconds) && ttlSeconds >= TTL_SECONDS.min && ttlSeconds <= TTL_SECONDS.max)
  )
    return undefined;
  if (requestId !== undefined && !plain(requestId, MAX_LENGTH.requestId)) return undefined;
  // In the schema's order, with only the fields given, as zod's output is.
  return {
    endpoint,
    amount,
    ...(caller === undefined ? {} : { caller }),
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
    ...(requestId === undefined ? {} : { requestId }),
  };
}

export type CeilingRemaining = {
  ceilingId: number;
  metric: CeilingMetric;
  scope: CeilingScope;
  window: CeilingWindow;
  limit: number;
  used: number;
  remaining: number;
  windowEnd: string;
};

/** What a budget the grant charged has left, in micros of its currency. */
export type BudgetRemaining = {
  budgetId: number;
  /** The budget's key. */
  budget: string;
  metric: "money";
  currency: string;
  scope: BudgetScope;
  window: BudgetWindow;
  limit: number;
  used: number;
  remaining: number;
  windowEnd: string;
};

export type Granted = {
  status: "granted";
  reservationId: string;
  expiresAt: string;
  /** True when an idempotency key returned a reservation made earlier. */
  replay: boolean;
  /**
   * What each ceiling the grant charged has left. Empty on a replay: a replay charges nothing and
   * reads no counter (ceilings.replay_answer), so it has no current numbers to give.
   */
  remaining: (CeilingRemaining | BudgetRemaining)[];
};

export type Refused = {
  status: "refused";
  gate: Gate;
  message: string;
  ceilingId?: number;
  /** Gate budget: the budget that said no (its id and key), its currency and what this call may cost, in micros. */
  budgetId?: number;
  budget?: string;
  currency?: string;
  cost?: number;
  limit?: number;
  used?: number;
  remaining?: number;
  /** The refusing window's end, when the call would pass then; absent for a kill, an account allowed nothing, or a call above the whole limit. */
  retryAt?: string;
  /** Gate `unavailable` only: why it failed closed (a deadline, a lock timeout, no connection...). */
  reason?: UnavailableReason;
  /**
   * Gate `unavailable` only: true when the request reached the database and its answer was lost
   * (a deadline or a connection cut after it was sent), so it may have been granted: a request
   * with an idempotency key stays held for its retry, which answers the reservation (replay); one
   * without is given back when its late answer comes. False: it was never decided, nothing held.
   */
  mayHaveApplied?: boolean;
};

/**
 * A retry whose idempotency key names a reservation that holds nothing any more: settled (the work
 * is done, do not spend again), released or expired (reserve again with a new key). Never a grant.
 */
export type Resolved = {
  status: "resolved";
  /** Named apart from Granted's reservationId, so code that only rules out "refused" does not compile. */
  existingReservationId: string;
  state: "settled" | "released" | "expired";
  replay: true;
  message: string;
};

export type Decision = Granted | Refused | Resolved;

export const INPUT_ERROR_CODES = [
  "invalid_input",
  "unknown_endpoint",
  "endpoint_archived",
  "invalid_amount",
  "invalid_parts",
  "invalid_ttl",
  "invalid_idempotency_key",
  "caller_required",
  "destination_required",
  "invalid_destination",
  "idempotency_conflict",
  "invalid_actual",
] as const;
export type InputErrorCode = (typeof INPUT_ERROR_CODES)[number];

/** What the SQL batch answers for one request. */
export type BatchAnswer = Decision | { status: "error"; code: InputErrorCode; message: string; reservationId?: string };

/** reserve_batch's resolved answer as SQL callers see it. */
export type SqlResolved = Omit<Resolved, "existingReservationId"> & { reservationId: string };

/** Invalid input is an error for the caller to fix, never a refusal. */
export class ReservationInputError extends DomainError<InputErrorCode> {
  override name = "ReservationInputError";
  constructor(
    code: InputErrorCode,
    message: string,
    readonly reservationId?: string,
  ) {
    super(code, message);
  }
}

/** What settling or releasing a reservation answered: the one result of resolving it. */
export type Resolution =
  | { status: "settled"; reservationId: string; actual: number; overrun: boolean; replay: boolean }
  | { status: "released"; reservationId: string; replay: boolean }
  | { status: "not_found"; message: string }
  | { status: "forbidden"; message: string }
  | {
      status: "already_resolved";
      state: "held" | "settled" | "released" | "expired";
      message: string;
      /** An overrun reported after expiry or release: recorded, `charged` units added to its window. */
      overrun?: true;
      charged?: number;
      replay?: boolean;
    }
  /**
   * The database did not answer in time or at all. `mayHaveApplied` is true when the change was
   * sent and its answer lost (it may have committed) or another call held the reservation, false
   * when it never reached the database or the database refused it. Either way retry the same call (idempotent): its answer says which
   * (`replay: true` if the first was applied).
   */
  | { status: "unavailable"; message: string; reason: UnavailableReason; retryable: true; mayHaveApplied: boolean };
