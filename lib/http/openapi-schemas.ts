import { z } from "zod";
import { CEILING_METRICS, CEILING_SCOPES, CEILING_WINDOWS, GATES } from "@/lib/vocabulary";

// The answers of the HTTP API as zod schemas, for the OpenAPI document only (the handlers build
// the answers; the OpenAPI response test checks real answers against these, so they cannot drift).
// Error codes per status follow the README's table; 400 is open-ended (a newer check may add a
// code such as duplicate_field) and lists the known ones as examples.

export const ERROR_CODES = {
  400: [
    "invalid_json",
    "invalid_input",
    "invalid_amount",
    "invalid_ttl",
    "unknown_field",
    "duplicate_field",
    "nesting_too_deep",
    "caller_required",
    "destination_required",
    "invalid_destination",
    "invalid_idempotency_key",
    "invalid_reservation_id",
    "invalid_actual",
  ],
  401: ["missing_api_key", "invalid_api_key", "revoked_api_key"],
  403: ["endpoint_not_allowed", "caller_not_allowed", "reservation_forbidden"],
  404: ["unknown_endpoint", "reservation_not_found"],
  409: ["idempotency_conflict", "already_resolved"],
  410: ["endpoint_archived"],
  413: ["body_too_large"],
  503: ["unavailable"],
} as const;

// A 429 names the gate that refused; unavailable is a 503 of its own (Unavailable below).
const RefusalGate = z.enum(GATES).exclude(["unavailable"]);

const errorObject = (code: z.ZodType) => z.strictObject({ code, message: z.string() });

/** `{ error: { code, message } }` with the codes of one status; extra top-level details allowed. */
export function errorBody(status: keyof typeof ERROR_CODES, codes: readonly string[] = ERROR_CODES[status]) {
  const code =
    status === 400
      ? z.string().meta({ description: `one of ${codes.join(", ")}, or a newer input check's code`, examples: [...codes] })
      : z.literal(codes);
  return z.looseObject({ error: errorObject(code) }).meta({ description: `codes: ${codes.join(", ")}` });
}

const Metric = z.enum(CEILING_METRICS);
const Scope = z.enum(CEILING_SCOPES);
const WindowKind = z.enum(CEILING_WINDOWS);
const Timestamp = z.string().meta({ format: "date-time" });

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

export const Granted = z.strictObject({
  reservationId: z.uuid(),
  expiresAt: Timestamp,
  replay: z.boolean(),
  remaining: z.array(CeilingRemaining),
});

export const Refusal = z.strictObject({
  gate: RefusalGate,
  ceilingId: z.int().optional(),
  limit: z.int().optional(),
  used: z.int().optional(),
  remaining: z.int().optional(),
  retryAt: Timestamp.optional(),
  error: errorObject(RefusalGate),
});

export const Unavailable = z.looseObject({ gate: z.literal("unavailable").optional(), error: errorObject(z.literal("unavailable")) });

export const Settled = z.strictObject({ status: z.literal("settled"), reservationId: z.uuid(), actual: z.int(), overrun: z.boolean(), replay: z.boolean() });
export const Released = z.strictObject({ status: z.literal("released"), reservationId: z.uuid(), replay: z.boolean() });

export const AlreadyResolved = z.strictObject({
  state: z.enum(["held", "settled", "released", "expired"]),
  error: errorObject(z.literal("already_resolved")),
});

const Counter = z.int().nullable();
export const EndpointStatusBody = z.strictObject({
  endpoint: z.strictObject({ key: z.string(), name: z.string(), unit: z.string(), perCallMax: z.int() }),
  account: z.string().nullable(),
  killed: z.boolean(),
  ceilings: z.array(
    z.strictObject({
      ceilingId: z.int(),
      metric: Metric,
      scope: Scope,
      value: z.int(),
      override: z.boolean(),
      killed: z.boolean(),
      window: z.strictObject({ kind: WindowKind, start: Timestamp.nullable(), end: Timestamp.nullable(), seconds: z.int().nullable() }),
      settled: Counter,
      held: Counter,
      used: Counter,
      remaining: Counter,
    }),
  ),
});
