import { sql } from "drizzle-orm";
import { z } from "zod";
import { type Db, resultRows } from "@/db/client";
import { enforcementObserver } from "./observer";
import { classifyFailure, noteUnavailable } from "./unavailable";
import { ReservationInputError, type SettleResult } from "./types";

const ReservationId = z.uuid("reservation id must be a UUID");
const Actual = z.number().int("actual must be a whole number").min(0, "actual must be zero or more").max(Number.MAX_SAFE_INTEGER);

async function call(db: Db, query: ReturnType<typeof sql>): Promise<SettleResult> {
  try {
    const row = resultRows<{ result: SettleResult | { status: "error"; code: "invalid_amount"; message: string } }>(
      await db.execute(query),
    )[0];
    if (!row) throw new Error("no result row");
    if (row.result.status === "error") throw new ReservationInputError(row.result.code, row.result.message);
    return row.result;
  } catch (error) {
    if (error instanceof ReservationInputError) throw error;
    const reason = classifyFailure(error);
    noteUnavailable(reason, 1, error);
    // The reservation stays held and expires as fully spent: never under-counted.
    return { status: "unavailable", message: `the reservation could not be updated (${reason})` };
  }
}

function parseId(id: string): string {
  const parsed = ReservationId.safeParse(id);
  if (!parsed.success) throw new ReservationInputError("invalid_input", parsed.error.issues[0]?.message ?? "invalid id");
  return parsed.data;
}

/**
 * Corrects a held reservation to the units actually used, in the window it was made in; the
 * call stays counted. Actual above the reservation is recorded and flagged as an overrun.
 * `caller`, when given, must own the reservation.
 */
export async function settleReservation(
  db: Db,
  params: { reservationId: string; actual: number; caller?: string },
): Promise<SettleResult> {
  const id = parseId(params.reservationId);
  const actual = Actual.safeParse(params.actual);
  if (!actual.success) throw new ReservationInputError("invalid_amount", actual.error.issues[0]?.message ?? "invalid actual");
  const result = await call(db, sql`select ceilings.settle(${id}::uuid, ${actual.data}::bigint, ${params.caller ?? null}) as result`);
  if (result.status === "settled" && !result.replay) enforcementObserver()?.settled(result.overrun);
  return result;
}

/** Gives a held reservation back (units and the call). Releasing twice is harmless. */
export async function releaseReservation(db: Db, params: { reservationId: string; caller?: string }): Promise<SettleResult> {
  const id = parseId(params.reservationId);
  return call(db, sql`select ceilings.release(${id}::uuid, ${params.caller ?? null}) as result`);
}

/** The expiry sweeper: held reservations past their TTL count as fully spent. Safe to run twice at once. */
export async function expireReservations(db: Db, maxRows = 500): Promise<number> {
  const row = resultRows<{ expired: number }>(
    await db.execute(sql`select ceilings.expire_reservations(${maxRows}::int) as expired`),
  )[0];
  const expired = Number(row?.expired ?? 0);
  if (expired > 0) enforcementObserver()?.expired(expired);
  return expired;
}
