import { eq, sql } from "drizzle-orm";
import { z } from "zod";
import { type Db, resultRows } from "@/db/client";
import { endpoints, reservations } from "@/db/schema";
import { Caller, Parts, ReservationInputError, type Resolution } from "./types";
import { enforcementLanes } from "@/lib/connection-bound";
import { env } from "@/lib/env";
import { issueLine } from "@/lib/errors";
import { Coalescer } from "./coalescer";
import { answerBy, LanePool } from "./lanes";
import { type ResolveItem, ResolveBatcher } from "./resolve-batcher";
import { enforcementObserver } from "./observer";
import { classifyFailure, mayHaveApplied, noteUnavailable } from "./unavailable";

const ReservationId = z.uuid("reservation id must be a UUID");
const Actual = z.number().int("actual must be a whole number").min(0, "actual must be zero or more").max(Number.MAX_SAFE_INTEGER);

const batchers = new WeakMap<Db, { lanes: LanePool; batcher: ResolveBatcher }>();

// Settle and release run on lanes of their own, so that past the deadline the call's connection
// is destroyed and a silent network cannot hold them (or the reservation batches) hostage; and
// they are batched, so concurrent ones share one lock of each hot counter and one commit.
function resolverFor(db: Db): { lanes: LanePool; batcher: ResolveBatcher } {
  let found = batchers.get(db);
  if (!found) {
    // Two in flight, as for reservations: every settle batch locks the same hot counters, so more
    // only queue behind each other (with four, 64 settling connections beside 64 reserving ones
    // saw a few batches wait past the 1 s lock timeout; with two, none, and as many settles).
    const size = enforcementLanes("resolve");
    const lanes = new LanePool(db, size);
    found = { lanes, batcher: new ResolveBatcher(lanes, size) };
    batchers.set(db, found);
  }
  return found;
}

/** Opens the settle and release lanes of `db` now (the API server, at start). */
export function warmResolveLanes(db: Db): Promise<void> {
  return resolverFor(db).lanes.warm();
}

export type ResolveOptions = {
  /** This call's deadline instead of ENFORCEMENT_DEADLINE_MS. */
  deadlineMs?: number;
};

async function call(db: Db, item: ResolveItem, options: ResolveOptions): Promise<Resolution> {
  // One state for the caller and the batcher, so "not applied" is never answered for an item that
  // is then sent: whichever comes first, the deadline or the send, decides it.
  const sending: { state: "waiting" | "sent" | "abandoned" } = { state: "waiting" };
  const onSent = () => {
    if (sending.state === "abandoned") return false;
    sending.state = "sent";
    return true;
  };
  try {
    const deadlineMs = options.deadlineMs ?? env().ENFORCEMENT_DEADLINE_MS;
    // Answered at the deadline itself: a batch's cancel and clean-up go on without the caller.
    const answer = await answerBy(resolverFor(db).batcher.submit(item, deadlineMs, onSent), deadlineMs);
    if (answer.status === "error") throw new ReservationInputError(answer.code, answer.message);
    // The database's own unavailable: another transaction holds the reservation right now (a
    // settle of it elsewhere, an earlier attempt still committing, the sweeper). This call changed
    // nothing, but what the other one does is unknown: the same call again says which.
    if (answer.status === "unavailable") return { ...answer, mayHaveApplied: true };
    return answer;
  } catch (error) {
    if (error instanceof ReservationInputError) throw error;
    if (sending.state === "waiting") sending.state = "abandoned";
    const reason = classifyFailure(error);
    noteUnavailable(reason, 1, error);
    // Once sent, the change may have been applied (a statement abandoned at its deadline can
    // still commit); the same call again is safe and tells which, since settle and release are
    // idempotent. Never sent, the reservation stays held and expires as fully spent.
    const may = mayHaveApplied(error, sending.state === "sent");
    return {
      status: "unavailable",
      reason,
      retryable: true,
      mayHaveApplied: may,
      message: `the reservation ${may ? "may or may not have been" : "was not"} updated (${reason}); the same call again is safe and says which`,
    };
  }
}

function parseId(id: string): string {
  const parsed = ReservationId.safeParse(id);
  if (!parsed.success) throw new ReservationInputError("invalid_input", parsed.error.issues[0]?.message ?? "invalid id");
  return parsed.data;
}

type EndpointKeyLookup = { id: string; resolve: (key: string | null) => void; reject: (error: unknown) => void };

const endpointKeyLookups = new WeakMap<Db, Coalescer<EndpointKeyLookup>>();

/**
 * The key of the endpoint a reservation was made on, or null when there is no such reservation:
 * what an API key's endpoint list is checked against before it may settle or release. Concurrent
 * lookups share one query (a query each was most of an HTTP settle's database time).
 */
export async function reservationEndpointKey(db: Db, reservationId: string): Promise<string | null> {
  const id = parseId(reservationId).toLowerCase();
  let lookups = endpointKeyLookups.get(db);
  if (!lookups) {
    lookups = new Coalescer<EndpointKeyLookup>({ maxBatch: 256, maxInFlight: 2, send: (batch) => lookUpEndpointKeys(db, batch) });
    endpointKeyLookups.set(db, lookups);
  }
  const queue = lookups;
  return new Promise((resolve, reject) => queue.add({ id, resolve, reject }));
}

async function lookUpEndpointKeys(db: Db, batch: EndpointKeyLookup[]): Promise<void> {
  try {
    const ids = [...new Set(batch.map((l) => l.id))];
    const rows = await db
      .select({ id: reservations.id, endpointKey: endpoints.key })
      .from(reservations)
      .innerJoin(endpoints, eq(endpoints.id, reservations.endpointId))
      .where(sql`${reservations.id} = any(${`{${ids.join(",")}}`}::uuid[])`);
    const keys = new Map(rows.map((r) => [r.id.toLowerCase(), r.endpointKey]));
    for (const l of batch) l.resolve(keys.get(l.id) ?? null);
  } catch (error) {
    for (const l of batch) l.reject(error);
  }
}

/**
 * Corrects a held reservation to the units actually used, in the window it was made in; the
 * call stays counted. Actual above the reservation is recorded and flagged as an overrun. An
 * endpoint priced part by part is settled with `parts` (its budgets are corrected to their money).
 * `caller`, when given, must own the reservation.
 */
export async function settleReservation(
  db: Db,
  params: { reservationId: string; actual?: number; parts?: Record<string, number>; caller?: string },
  options: ResolveOptions = {},
): Promise<Resolution> {
  const id = parseId(params.reservationId);
  if (params.actual === undefined && params.parts === undefined) throw new ReservationInputError("invalid_amount", "actual (or parts) is required");
  const actual = params.actual === undefined ? undefined : Actual.safeParse(params.actual);
  if (actual && !actual.success) throw new ReservationInputError("invalid_amount", actual.error.issues[0]?.message ?? "invalid actual");
  const parts = params.parts === undefined ? undefined : Parts.safeParse(params.parts);
  if (parts && !parts.success) {
    const issue = parts.error.issues[0];
    throw new ReservationInputError("invalid_input", issueLine({ path: ["parts", ...(issue?.path ?? [])].join("."), message: issue?.message ?? "invalid" }));
  }
  const caller = parseCaller(params.caller);
  const item = {
    id,
    verb: "settle" as const,
    ...(actual ? { actual: actual.data } : {}),
    ...(parts ? { parts: parts.data } : {}),
    ...(caller === null ? {} : { caller }),
  };
  const result = await call(db, item, options);
  if (result.status === "settled" && !result.replay) enforcementObserver()?.settled(result.overrun);
  return result;
}

/** Gives a held reservation back (units and the call). Releasing twice is harmless. */
export async function releaseReservation(db: Db, params: { reservationId: string; caller?: string }, options: ResolveOptions = {}): Promise<Resolution> {
  const id = parseId(params.reservationId);
  const caller = parseCaller(params.caller);
  return call(db, { id, verb: "release", ...(caller === null ? {} : { caller }) }, options);
}

function parseCaller(caller: string | undefined): string | null {
  if (caller === undefined) return null;
  const parsed = Caller.safeParse(caller);
  if (!parsed.success) throw new ReservationInputError("invalid_input", `caller: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}

/** The expiry sweeper: held reservations past their TTL count as fully spent. Safe to run twice at once. */
export async function expireReservations(db: Db, maxRows = 500): Promise<number> {
  const row = resultRows<{ expired: number }>(await db.execute(sql`select ceilings.expire_reservations(${maxRows}::int) as expired`))[0];
  const expired = Number(row?.expired ?? 0);
  if (expired > 0) enforcementObserver()?.expired(expired);
  return expired;
}
