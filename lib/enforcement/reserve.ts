import type { Db } from "@/db/client";
import { canonicalDestination, InvalidDestinationError } from "@/lib/canonical";
import { enforcementLanes } from "@/lib/connection-bound";
import { env } from "@/lib/env";
import { issueLine } from "@/lib/errors";
import { type BatcherOptions, type BatchRequest, ReservationBatcher } from "./batcher";
import { type Decision, plainReserveParams, ReservationInputError, ReserveParams } from "./types";

const batchers = new WeakMap<Db, ReservationBatcher>();

function defaultOptions(): BatcherOptions {
  const e = env();
  // Two in flight: one batch holds the hot rows while the next is read and validated. More slots
  // only make smaller batches queue on the same lock, each paying its own commit (measured with
  // npm run bench:enforcement: 2 in flight ≈ 1.3-1.5x the throughput of 4 on one hot ceiling).
  return { maxBatch: 128, maxInFlight: enforcementLanes("reserve", e), deadlineMs: e.ENFORCEMENT_DEADLINE_MS, split: true };
}

/** The batcher for one database handle; tests may pass their own options the first time. */
export function batcherFor(db: Db, options?: Partial<BatcherOptions>): ReservationBatcher {
  let batcher = batchers.get(db);
  if (!batcher) {
    batcher = new ReservationBatcher(db, { ...defaultOptions(), ...options });
    batchers.set(db, batcher);
  }
  return batcher;
}

export type ReserveOptions = {
  /** This call's deadline instead of ENFORCEMENT_DEADLINE_MS. */
  deadlineMs?: number;
};

/**
 * Reserves the worst case of one call across every ceiling of the endpoint, atomically.
 * Resolves to a grant, a refusal (a database failure is a refusal with gate `unavailable`), or,
 * for an idempotency key whose reservation is settled, released or expired, `resolved` with
 * that state (spend only on `granted`); throws ReservationInputError for input the caller must fix.
 */
export async function reserve(db: Db, params: ReserveParams, options: ReserveOptions = {}): Promise<Decision> {
  // Checked before the batcher is made: a call refused for its input sets up nothing.
  const request = withDestinationKey(plainReserveParams(params) ?? parsed(params));
  const answer = await batcherFor(db).submit(request, options.deadlineMs);
  if (answer.status === "error") throw new ReservationInputError(answer.code, answer.message, answer.reservationId);
  return answer;
}

/** The params as ReserveParams parses them, or the input error of its first issue. */
function parsed(params: ReserveParams): BatchRequest {
  const result = ReserveParams.safeParse(params);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.join(".") || "input";
  const code = field === "amount" ? "invalid_amount" : field === "ttlSeconds" ? "invalid_ttl" : "invalid_input";
  throw new ReservationInputError(code, issueLine({ path: issue?.path.join(".") ?? "", message: issue?.message ?? "invalid input" }));
}

/**
 * The cooldown counts inboxes and phone lines, not strings: fold the destination to its canonical
 * identity unless the caller already did. The original stays on the reservation for delivery.
 */
function withDestinationKey(request: BatchRequest): BatchRequest {
  if (request.destination === undefined || request.destinationKey !== undefined) return request;
  try {
    const { key } = canonicalDestination(request.destination, { defaultCountry: env().DEFAULT_PHONE_COUNTRY });
    return { ...request, destinationKey: key };
  } catch (error) {
    if (error instanceof InvalidDestinationError) throw new ReservationInputError("invalid_destination", `destination: ${error.message}`);
    throw error;
  }
}
