import { z } from "zod";
import { BUDGET_SCOPES, BUDGET_WINDOWS, CEILING_METRICS, CEILING_SCOPES, CEILING_WINDOWS, GATES, LIMIT_SOURCES, UNAVAILABLE_REASONS } from "@/lib/vocabulary";

// The answers of the HTTP API as zod schemas, for the OpenAPI document only (the handlers build
// the answers; the conformance test holds real answers to these, so they cannot drift), and the
// catalogue of every error code the API can answer, with its status and meaning: the document
// lists it (x-error-codes, and the ErrorCode enum), so the API reference can be generated from it.

type ErrorCodeInfo = { status: number; meaning: string };

/** Every error code of /api/v1, in the order the reference lists them. */
export const API_ERROR_CODES = {
  invalid_json: { status: 400, meaning: "the body is not valid JSON, or not UTF-8" },
  nesting_too_deep: { status: 400, meaning: "the body nests arrays and objects more than 32 levels deep" },
  duplicate_field: { status: 400, meaning: "a field appears twice in one object of the body" },
  invalid_characters: {
    status: 400,
    meaning: "a string of the body (a key or a value) holds a control character or a lone surrogate (an unpaired \\ud800-\\udfff escape)",
  },
  unknown_field: { status: 400, meaning: "the body has a field the call does not take (a misspelt idempotencyKey must not turn a retry into a second charge)" },
  invalid_input: {
    status: 400,
    meaning: "a field, a path segment or a query parameter breaks its rule (type, length, blank, control characters); the message names it",
  },
  invalid_amount: { status: 400, meaning: "amount or actual is not a JSON number that is a safe whole number (at least 1 for amount, 0 for actual)" },
  invalid_parts: {
    status: 400,
    meaning:
      "parts do not name every priced part of the endpoint and only those (the message names the part), or an endpoint priced part by part got one amount, or a single-part call's amount is not the parts' total",
  },
  invalid_ttl: { status: 400, meaning: "ttlSeconds is not a whole number from 1 to 86400" },
  invalid_request_id: { status: 400, meaning: "the X-Request-Id header is longer than 100 characters or holds a control character" },
  caller_required: { status: 400, meaning: "the endpoint has a per-caller ceiling and a trusted key named no caller" },
  destination_required: { status: 400, meaning: "the endpoint has a cooldown and the call named no destination" },
  invalid_destination: { status: 400, meaning: "the destination is not an address or number the cooldown can count (or of another kind than it counts)" },
  invalid_reservation_id: { status: 400, meaning: "the reservation id in the path is not a UUID" },
  invalid_actual: { status: 400, meaning: "actual is above the endpoint's per-call max; nothing changed" },
  unknown_plan: { status: 400, meaning: "the plan named is a plan key no plan has; nothing was assigned" },
  invalid_rows: {
    status: 400,
    meaning:
      "rows of a bulk assignment were refused (a bad account, an unknown plan, an account twice): rows names each, the first 100, with its index; refused counts them all; nothing was assigned",
  },
  too_many: { status: 400, meaning: "a bulk assignment of more than 10,000 rows; nothing was read or assigned" },
  missing_api_key: { status: 401, meaning: "no 'Authorization: Bearer ck_...' header" },
  invalid_api_key: { status: 401, meaning: "the API key is not one the server knows" },
  revoked_api_key: { status: 401, meaning: "the API key was revoked" },
  insufficient_scope: {
    status: 403,
    meaning:
      "the API key lacks the scope this call needs (reserve for reservations and endpoint status, accounts:read to read an account, accounts:write to assign plans); the message and WWW-Authenticate name it; nothing changed",
  },
  endpoint_not_allowed: { status: 403, meaning: "the API key may not use this endpoint" },
  caller_not_allowed: { status: 403, meaning: "a key bound to an account named another account as caller" },
  reservation_forbidden: { status: 403, meaning: "the reservation belongs to another account" },
  plan_not_key_assignable: {
    status: 403,
    meaning:
      "the assignment would move an account to a looser plan (a limit that binds it goes up, its overrides first) that two admins have not marked assignable by key: a key cannot ask for a second admin, so an admin moves it from the dashboard or the CLI; rows names each loosening row; nothing was assigned",
  },
  unknown_endpoint: { status: 404, meaning: "no endpoint has this key" },
  reservation_not_found: { status: 404, meaning: "no reservation has this id" },
  not_found: { status: 404, meaning: "no route answers this path under /api" },
  method_not_allowed: { status: 405, meaning: "the path does not answer this method; the Allow header lists those it does" },
  idempotency_conflict: { status: 409, meaning: "the idempotencyKey was used for a call with another amount or destination" },
  already_resolved: { status: 409, meaning: "the reservation (or the idempotencyKey's reservation) is settled, released or expired; state says which" },
  endpoint_archived: { status: 410, meaning: "an admin archived the endpoint: nothing is charged until it is unarchived" },
  body_too_large: { status: 413, meaning: "the body is over 16 KiB (4 MiB for a bulk assignment)" },
  per_call_max: { status: 429, meaning: "refused: the amount is above the endpoint's per-call max" },
  kill_switch: { status: 429, meaning: "refused: the endpoint or a ceiling is killed (value 0)" },
  ceiling: { status: 429, meaning: "refused: a ceiling's window has not enough left" },
  cooldown: { status: 429, meaning: "refused: the destination is cooling down" },
  throttle: { status: 429, meaning: "refused: the endpoint's calls per minute are spent" },
  budget: {
    status: 429,
    meaning:
      "refused: a budget the endpoint belongs to has not enough money left in its window for this call's worst case (or is killed, or the account is blocked on it); nothing was charged anywhere",
  },
  blocked: { status: 429, meaning: "refused: staff blocked this billing account; every endpoint refuses it until it is unblocked; nothing was charged" },
  internal: {
    status: 500,
    meaning:
      "an unexpected error in the server (a bug, not an outage): logged under requestId; what it changed is unknown, so retry a reserve only with its idempotencyKey (a settle or release is safe to retry) and report the requestId",
  },
  unavailable: {
    status: 503,
    meaning:
      "fail closed: the server could not get an answer from its database in time. mayHaveApplied false: nothing was charged, retry shortly; true (a reserve, settle or release that reached the database and whose answer was lost): it may have been applied, so retry the same call (a reserve with its idempotencyKey): its answer says which",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

export type ApiErrorCode = keyof typeof API_ERROR_CODES;
export const API_ERROR_CODE_NAMES = Object.keys(API_ERROR_CODES) as ApiErrorCode[];

/** The codes of each status, for statusOf (lib/http/responses.ts). */
export const ERROR_CODES: Record<number, ApiErrorCode[]> = {};
for (const code of API_ERROR_CODE_NAMES) (ERROR_CODES[API_ERROR_CODES[code].status] ??= []).push(code);

// A 429 names the gate that refused; unavailable is a 503 of its own (Unavailable below).
const RefusalGate = z.enum(GATES).exclude(["unavailable"]);

const errorObject = (code: z.ZodType) => z.strictObject({ code, message: z.string() });
const codeOf = (codes: readonly ApiErrorCode[]) =>
  codes.length === 1 ? z.literal(codes[0] as ApiErrorCode) : z.enum(codes as [ApiErrorCode, ...ApiErrorCode[]]);
const described = (codes: readonly ApiErrorCode[]) => codes.map((c) => `${c}: ${API_ERROR_CODES[c].meaning}`).join("; ");

/** `{ error: { code, message } }` with exactly these codes, nothing else in it. */
export function errorBody(codes: readonly ApiErrorCode[]) {
  return z.strictObject({ error: errorObject(codeOf(codes)) }).meta({ description: described(codes) });
}

const Metric = z.enum(CEILING_METRICS);
const Scope = z.enum(CEILING_SCOPES);
const WindowKind = z.enum(CEILING_WINDOWS);
const Timestamp = z.string().meta({ format: "date-time" });
const OverrideEndsAt = Timestamp.nullable().meta({
  description:
    "when the account's override ends by itself (source override): the value that binds it then is its plan's or the limit's own; null when it lasts or another source binds",
});
const Uuid = z.uuid();

export const CeilingRemaining = z.strictObject({
  ceilingId: z.int(),
  metric: Metric,
  scope: Scope,
  window: WindowKind,
  limit: z.int(),
  used: z.int(),
  remaining: z.int(),
  windowEnd: Timestamp,
});

export const BudgetRemaining = z.strictObject({
  budgetId: z.int(),
  budget: z.string().meta({ description: "the budget's key" }),
  metric: z.literal("money"),
  currency: z.string(),
  scope: z.enum(BUDGET_SCOPES),
  window: z.enum(BUDGET_WINDOWS),
  limit: z.int().meta({ description: "micros of currency" }),
  used: z.int(),
  remaining: z.int(),
  windowEnd: Timestamp,
});

export const Granted = z.strictObject({
  reservationId: Uuid,
  expiresAt: Timestamp,
  replay: z.boolean(),
  remaining: z
    .array(z.union([CeilingRemaining, BudgetRemaining]))
    .meta({ description: "each ceiling's window, then each budget's (money in micros), after this grant; empty on a replay, which charged nothing new" }),
});

export const Refusal = z.strictObject({
  gate: RefusalGate,
  ceilingId: z.int().optional(),
  budgetId: z.int().optional().meta({ description: "gate budget: the budget that refused" }),
  budget: z.string().optional().meta({ description: "gate budget: its key" }),
  currency: z.string().optional(),
  cost: z.int().optional().meta({ description: "gate budget: this call's worst case in micros" }),
  limit: z.int().optional(),
  used: z.int().optional(),
  remaining: z.int().optional(),
  retryAt: Timestamp.optional().meta({
    description:
      "gates ceiling, cooldown and budget: the refusing window's end, when the call would pass in the next window; absent for a kill (a ceiling or budget at 0), an account allowed nothing, or a call costing more than the whole limit, which the next window refuses again",
  }),
  error: errorObject(RefusalGate),
});

/** A reserve says which gate failed closed; settle, release, a status read and the key check do not. */
export const Unavailable = z.strictObject({
  gate: z.literal("unavailable").optional(),
  reason: z.enum(UNAVAILABLE_REASONS).optional().meta({
    description:
      "why the server failed closed, for a client to count and alert on: deadline (no answer within the server's deadline), statement_timeout, lock_timeout, deadlock, serialization, connection (no database connection, or it dropped), unreplicated (a commit no synchronous standby confirmed), not_configured (the enforcement functions are missing: run the migrations), contract_version (the functions are of another version), locked (settle and release: another call holds the reservation right now), unknown",
  }),
  mayHaveApplied: z.boolean().optional().meta({
    description:
      "reserve, settle and release: true when the call was sent to the database and its answer lost (or, for a settle or release, another call held the reservation at that moment), so it may have been applied: retry the same call, a reserve with the same idempotencyKey (a reserve without one is given back when its late answer comes), and its answer says which (replay: true). False or absent: it was not applied, nothing was charged",
  }),
  error: errorObject(z.literal("unavailable")),
});

/** An unexpected error: a bug, not an outage. */
export const Internal = z.strictObject({
  requestId: z.string().meta({ description: "the id this failure is logged under: report it" }),
  error: errorObject(z.literal("internal")),
});

export const Settled = z.strictObject({ status: z.literal("settled"), reservationId: Uuid, actual: z.int(), overrun: z.boolean(), replay: z.boolean() });
export const Released = z.strictObject({ status: z.literal("released"), reservationId: Uuid, replay: z.boolean() });

/** A reserve whose idempotencyKey was used with another amount or destination. */
export const IdempotencyConflict = z.strictObject({
  reservationId: Uuid.optional().meta({ description: "the reservation the key already names" }),
  error: errorObject(z.literal("idempotency_conflict")),
});

/** A reserve whose idempotencyKey names a reservation that holds nothing any more: not a grant. */
export const ReplayResolved = z.strictObject({
  state: z.enum(["settled", "released", "expired"]),
  reservationId: Uuid,
  replay: z.literal(true),
  error: errorObject(z.literal("already_resolved")),
});

const resolvedError = errorObject(z.literal("already_resolved"));
/** A settle or release of a reservation already settled, released or expired. */
export const AlreadyResolved = z.union([
  z.strictObject({ state: z.enum(["held", "settled", "released", "expired"]), error: resolvedError }),
  z
    .strictObject({
      state: z.enum(["released", "expired"]),
      overrun: z.literal(true),
      charged: z.int().min(0).meta({ description: "the units charged to the reservation's window for the overrun" }),
      replay: z.boolean(),
      error: resolvedError,
    })
    .meta({
      description:
        "a settle above the reserved amount after expiry or release: the overrun was recorded and charged; the same settle again is a replay that charges nothing more",
    }),
]);

const Counter = z.int().nullable();
export const EndpointStatusBody = z.strictObject({
  endpoint: z.strictObject({ key: z.string(), name: z.string(), unit: z.string(), perCallMax: z.int() }),
  account: z.string().nullable(),
  plan: z.string().nullable().meta({ description: "the account's plan (the default plan when it was never assigned one); null without an account" }),
  blocked: z.boolean().meta({ description: "staff blocked the account: every endpoint refuses it (gate blocked)" }),
  killed: z.boolean(),
  ceilings: z.array(
    z.strictObject({
      ceilingId: z.int(),
      metric: Metric,
      scope: Scope,
      value: z.int(),
      override: z.boolean(),
      source: z.enum(LIMIT_SOURCES).meta({ description: "why value binds: the ceiling's own value, the account's plan or override, a kill, a block" }),
      overrideEndsAt: OverrideEndsAt,
      killed: z.boolean(),
      window: z.strictObject({ kind: WindowKind, start: Timestamp.nullable(), end: Timestamp.nullable(), seconds: z.int().nullable() }),
      settled: Counter,
      held: Counter,
      used: Counter,
      remaining: Counter,
    }),
  ),
  budgets: z
    .array(
      z.strictObject({
        budgetId: z.int(),
        budget: z.string().meta({ description: "the budget's key" }),
        name: z.string(),
        currency: z.string().meta({ description: "ISO 4217; every amount of the budget is in micros (millionths) of it" }),
        scope: z.enum(["global", "account"]),
        value: z.int().meta({
          description: "micros: what binds the account asked about (its override, its plan's value, 0 when blocked), else the budget's own; 0 when killed",
        }),
        source: z.enum(["budget", "plan", "override", "kill", "blocked"]),
        overrideEndsAt: OverrideEndsAt,
        killed: z.boolean(),
        window: z.strictObject({ kind: z.enum(["utc_day", "billing_month"]), start: Timestamp, end: Timestamp }),
        settled: Counter.meta({ description: "micros settled in the current window; null for a per-account budget read without an account" }),
        held: Counter.meta({ description: "micros held by reservations in flight" }),
        used: Counter,
        remaining: Counter.meta({ description: "micros left: a reservation whose worst case costs more is refused with gate budget" }),
      }),
    )
    .meta({ description: "the live budgets the endpoint belongs to, for the caller's account: a reservation charges every one of them" }),
});

// ---- accounts ----------------------------------------------------------------------------------

export const PlanAssigned = z.strictObject({
  account: z.string().meta({ description: "the account as stored: trimmed" }),
  plan: z.string().meta({ description: "the plan's key the account is on now" }),
  previous: z.string().meta({ description: "the plan's key it was on before: the default plan's when it had none assigned" }),
  previousWasDefault: z.boolean().meta({ description: "true when the account had no plan assigned and followed the default" }),
  changed: z.boolean().meta({ description: "false when the account was already assigned this plan: nothing was written (a retry is safe)" }),
});

export const PlansAssigned = z.strictObject({
  assigned: z.int().meta({ description: "accounts whose plan changed, each audited" }),
  unchanged: z.int().meta({ description: "accounts already assigned the plan of their row" }),
  batch: Uuid.meta({ description: "names this assignment in the audit log (details.batch of each account's event)" }),
});

const RowProblemBody = z.strictObject({
  index: z.int().min(0).meta({ description: "the row's place in accounts, from 0" }),
  account: z.string().meta({ description: "the account as sent (control characters replaced by U+FFFD, cut at 200 characters)" }),
  code: z.enum(["invalid_input", "unknown_plan", "duplicate_account", "unknown_field"]),
  message: z.string(),
});

export const LooseningRefused = z.strictObject({
  rows: z
    .array(RowProblemBody.extend({ code: z.literal("loosens") }))
    .meta({ description: "the rows that would loosen an account onto a plan not assignable by key, in body order, at most 100" }),
  refused: z.int().min(1).meta({ description: "how many rows were refused in all" }),
  error: errorObject(z.literal("plan_not_key_assignable")),
});

export const RowsRefused = z.strictObject({
  rows: z.array(RowProblemBody).meta({ description: "the refused rows in body order, at most 100" }),
  refused: z.int().min(1).meta({ description: "how many rows were refused in all" }),
  error: errorObject(z.literal("invalid_rows")),
});

const Binding = z.enum(["kill", "blocked", "override", "plan", "ceiling", "budget"]).meta({
  description:
    "where the value comes from: the ceiling or budget is killed (0 binds everyone), the account is blocked (0 everywhere), the account's override, its plan's value, or the ceiling's or budget's own",
});

export const AccountBody = z.strictObject({
  account: z.string(),
  known: z.boolean().meta({ description: "whether any reservation or assignment has named the account" }),
  plan: z.strictObject({ key: z.string(), name: z.string() }),
  planAssigned: z.boolean().meta({ description: "false: the account follows the default plan, whichever that is" }),
  planSetAt: Timestamp.nullable(),
  planSetBy: z.string().nullable().meta({ description: "who assigned it; null for a key bound to the account" }),
  blocked: z
    .strictObject({ at: Timestamp, by: z.string().nullable(), reason: z.string().nullable() })
    .nullable()
    .meta({ description: "staff blocked the account: every endpoint refuses it (gate blocked). by and reason are null for a key bound to the account" }),
  firstSeenAt: Timestamp.nullable(),
  ceilings: z
    .array(
      z.strictObject({
        ceilingId: z.int(),
        endpoint: z.string(),
        metric: Metric,
        window: WindowKind,
        value: z.int(),
        source: Binding,
        overrideEndsAt: OverrideEndsAt,
      }),
    )
    .meta({ description: "each per-caller ceiling of a live endpoint and the value that binds this account on it" }),
  budgets: z
    .array(
      z.strictObject({
        budget: z.string(),
        currency: z.string(),
        window: z.enum(BUDGET_WINDOWS),
        value: z.int().meta({ description: "micros of currency" }),
        source: Binding,
        overrideEndsAt: OverrideEndsAt,
      }),
    )
    .meta({ description: "each live per-account budget and the value that binds this account on it" }),
});
