import type { Db } from "@/db/client";
import { releaseReservation, settleReservation } from "./resolve";
import { reserve } from "./reserve";
import type { Granted, Parts, Refused, ReserveParams, Resolved, Resolution } from "./types";

/** The work's result and what it used: its units, or the units of each part of an endpoint priced part by part. */
export type Work<T> = (grant: Granted) => Promise<{ actual: number | Parts; result: T }>;

export type WithReservationResult<T> = { status: "done"; result: T; reservationId: string; settlement: Resolution } | Refused | Resolved;

/**
 * Reserve, run, settle with the reported actual; release if the work throws (the work did not
 * happen), then rethrow. A refusal, or a key whose reservation is already resolved, is returned without running the work.
 */
export async function withReservation<T>(db: Db, params: ReserveParams, work: Work<T>): Promise<WithReservationResult<T>> {
  const decision = await reserve(db, params);
  if (decision.status !== "granted") return decision;
  let outcome: Awaited<ReturnType<Work<T>>>;
  try {
    outcome = await work(decision);
  } catch (error) {
    await releaseReservation(db, { reservationId: decision.reservationId });
    throw error;
  }
  const { actual } = outcome;
  const settlement = await settleReservation(db, { reservationId: decision.reservationId, ...(typeof actual === "number" ? { actual } : { parts: actual }) });
  return { status: "done", result: outcome.result, reservationId: decision.reservationId, settlement };
}
