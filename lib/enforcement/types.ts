import { z } from "zod";

export const GATES = ["kill_switch", "per_call_max", "ceiling", "cooldown", "throttle", "unavailable"] as const;
export type Gate = (typeof GATES)[number];

// Parsed at the library's boundary; the SQL function validates again for callers in other languages.
export const ReserveParams = z.object({
  endpoint: z.string().min(1, "endpoint is required").max(64),
  amount: z
    .number({ error: "amount must be a number" })
    .int("amount must be a whole number")
    .positive("amount must be positive")
    .max(Number.MAX_SAFE_INTEGER, "amount is too large"),
  caller: z.string().min(1).max(200).optional(),
  destination: z.string().min(1).max(320).optional(),
  /** The canonical identity for the cooldown; derived from destination when absent. */
  destinationKey: z.string().min(1).max(320).optional(),
  idempotencyKey: z.string().min(1).max(200).optional(),
  ttlSeconds: z.number().int().min(1).max(86_400).optional(),
  requestId: z.string().max(100).optional(),
});
export type ReserveParams = z.input<typeof ReserveParams>;

export type CeilingRemaining = {
  ceilingId: number;
  metric: "units" | "calls";
  scope: "global" | "caller" | "destination";
  window: "utc_day" | "billing_month" | "first_hit";
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
  remaining: CeilingRemaining[];
};

export type Refused = {
  status: "refused";
  gate: Gate;
  message: string;
  ceilingId?: number;
  limit?: number;
  used?: number;
  remaining?: number;
  retryAt?: string;
};

export type Decision = Granted | Refused;

export const INPUT_ERROR_CODES = [
  "invalid_input",
  "unknown_endpoint",
  "invalid_amount",
  "invalid_ttl",
  "invalid_idempotency_key",
  "caller_required",
  "destination_required",
  "invalid_destination",
  "idempotency_conflict",
] as const;
export type InputErrorCode = (typeof INPUT_ERROR_CODES)[number];

/** What the SQL batch answers for one request. */
export type BatchAnswer = Decision | { status: "error"; code: InputErrorCode; message: string; reservationId?: string };

/** Invalid input is an error for the caller to fix, never a refusal. */
export class ReservationInputError extends Error {
  override name = "ReservationInputError";
  constructor(
    readonly code: InputErrorCode,
    message: string,
    readonly reservationId?: string,
  ) {
    super(message);
  }
}

export type SettleResult =
  | { status: "settled"; reservationId: string; actual: number; overrun: boolean; replay: boolean }
  | { status: "released"; reservationId: string; replay: boolean }
  | { status: "not_found"; message: string }
  | { status: "forbidden"; message: string }
  | { status: "already_resolved"; state: "held" | "settled" | "released" | "expired"; message: string }
  | { status: "unavailable"; message: string };
