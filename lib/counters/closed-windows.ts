import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { MINUTE_MS } from "@/lib/time";

// What the worker's ledgers of closed windows share (the what-if's days, lib/changes/what-if-days.ts;
// the accounts' 30-day totals, ./caller-totals.ts): what counts as closed, and the lock that keeps
// a late overrun from landing in a window while it is being read.

/**
 * A window is read this long after now at the earliest: a reservation still being made has a
 * created_at (its transaction's start) a little in the past, and must not land in what was read.
 */
export const IN_FLIGHT_MS = 5 * MINUTE_MS;

/**
 * The lock a ledger's builder holds while it reads an endpoint's closed windows, and that
 * ceilings.settle takes before it charges a late overrun (an overrun reported after the
 * reservation expired or was released, the one thing that moves a closed window) and deletes
 * what the ledgers wrote of that window: the overrun is either read or deleted, never lost.
 */
export async function lockClosedWindows(tx: Db, endpointId: number): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('closed_windows'), ${endpointId})`);
}
