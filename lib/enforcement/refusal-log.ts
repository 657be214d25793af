// The refusals the library logs itself: those of a batch the database did not decide (gate
// `unavailable`: a lock or statement timeout, a deadlock). A refusal the database decided is
// logged by reserve_batch in the batch's own transaction. Here every refusal reaches the log and
// the alert rules whatever the request's shape (an amount or parts), one row that cannot be
// written never takes the batch's other rows with it, and a row lost is counted (health, metrics)
// and logged, never swallowed.
import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { replaceControlChars } from "@/lib/canonical/caller";
import { logError } from "@/lib/log/redact";
import type { BatchRequest } from "./batcher";
import { enforcementObserver } from "./observer";
import type { UnavailableReason } from "./unavailable";

// A refusal must be storable even when its request was what failed (a NUL in the caller).
const storable = replaceControlChars;

let failures = 0;

/** Refusals this process could not store since it started. */
export function refusalLogFailures(): number {
  return failures;
}

/** A request's units: its amount, or for an endpoint priced part by part the total of its parts. */
function requestUnits(r: Pick<BatchRequest, "amount" | "parts">): number {
  if (r.amount !== undefined) return r.amount;
  return Object.values(r.parts ?? {}).reduce((sum, n) => sum + (Number.isSafeInteger(n) && n > 0 ? n : 0), 0);
}

function refusalItem(r: BatchRequest, reason: UnavailableReason) {
  return {
    endpointKey: storable(r.endpoint),
    gate: "unavailable",
    caller: storable(r.caller ?? ""),
    destination: storable(r.destinationKey ?? r.destination?.trim().toLowerCase() ?? ""),
    amount: requestUnits(r),
    requestId: r.requestId === undefined ? undefined : storable(r.requestId),
    detail: reason,
  };
}

/**
 * Stores the refusals of requests refused `unavailable` for `reason`. Not for the reasons where
 * the database cannot be written (no connection, not migrated, a deadline): those go to stderr
 * and the in-process counters only (unavailable.ts).
 */
export async function logUnavailable(db: Db, requests: readonly BatchRequest[], reason: UnavailableReason): Promise<void> {
  if (["connection", "not_configured", "contract_version", "deadline"].includes(reason) || requests.length === 0) return;
  const items = requests.map((r) => refusalItem(r, reason));
  const write = (rows: typeof items) => db.execute(sql`select ceilings.log_refusals(${JSON.stringify(rows)}::jsonb)`);
  try {
    await write(items);
    return;
  } catch (error) {
    if (items.length === 1) return lost(error);
  }
  // One statement for all failed: each row alone, so only the rows that cannot be written are lost.
  for (const item of items) {
    try {
      await write([item]);
    } catch (error) {
      lost(error);
    }
  }
}

function lost(error: unknown): void {
  failures += 1;
  enforcementObserver()?.refusalLogFailed(1);
  logError("refusal log: a refusal could not be stored", error);
}
