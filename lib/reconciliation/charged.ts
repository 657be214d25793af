import { and, gte, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { reservations } from "@/db/schema";

// What Ceilings charged, counted the way the provider bills: by the reservation's creation time
// within the provider's day. A settle keeps what was actually used (overruns included); an expiry
// keeps the whole reservation (nobody said it was not spent); a release keeps nothing; a held
// reservation is not final, so it is only counted, to say the day may still move.
// An overrun reported after the release or expiry (settle.sql keeps the state, sets overrun and
// settled_amount/settled_money to the actual, and charges it to the ledger) counts as the ledger
// does: a released one its actual, an expired one the greater of reserved and actual. Where the
// settled money is missing, the reserved money stands in, as for a settled reservation.

export type Charged = { units: number; micros: number; held: number };

/** Charged units and micros per endpoint over [start, end), one statement on (endpoint_id, created_at). */
export async function chargedBetween(db: Db, endpointIds: number[], start: Date, end: Date): Promise<Map<number, Charged>> {
  const result = new Map<number, Charged>();
  const ids = [...new Set(endpointIds)];
  for (const id of ids) result.set(id, { units: 0, micros: 0, held: 0 });
  if (ids.length === 0) return result;
  const rows = await db
    .select({
      endpointId: reservations.endpointId,
      // What each finally charged (ceilings.final_units and final_money, the one spelling of it);
      // a held one is not final and counts nothing here.
      units: sql<number>`coalesce(sum(ceilings.final_units(${reservations})) filter (where ${reservations.state} <> 'held'), 0)::bigint`.mapWith(Number),
      micros: sql<number>`coalesce(sum(ceilings.final_money(${reservations})) filter (where ${reservations.state} <> 'held'), 0)::bigint`.mapWith(Number),
      held: sql<number>`count(*) filter (where ${reservations.state} = 'held')::int`.mapWith(Number),
    })
    .from(reservations)
    .where(and(inArray(reservations.endpointId, ids), gte(reservations.createdAt, start), lt(reservations.createdAt, end)))
    .groupBy(reservations.endpointId);
  for (const r of rows) result.set(r.endpointId, { units: r.units, micros: r.micros, held: r.held });
  return result;
}
