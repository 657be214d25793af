import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { type Db, preparedRunner, resultRows } from "@/db/client";
import { hasLoneSurrogate } from "@/lib/canonical/caller";
import { Coalescer } from "./coalescer";
import { ContractCheck } from "./contract";
import { LanePool } from "./lanes";
import { enforcementObserver } from "./observer";
import { classifyFailure, mayHaveApplied, noteUnavailable, type UnavailableReason } from "./unavailable";
import type { BatchAnswer, BudgetRemaining, CeilingRemaining, Granted, Refused, Resolved, SqlResolved } from "./types";
import { logUnavailable } from "./refusal-log";

/** One request as the SQL batch function takes it. */
export type BatchRequest = {
  endpoint: string;
  amount?: number;
  parts?: Record<string, number>;
  caller?: string;
  destination?: string;
  destinationKey?: string;
  idempotencyKey?: string;
  ttlSeconds?: number;
  requestId?: string;
};

export type BatcherOptions = {
  /** Largest batch sent in one database call. */
  maxBatch: number;
  /** Batches in flight at once, each on a connection of its own. */
  maxInFlight: number;
  /** A caller gets a decision within this many milliseconds, whatever the database does. */
  deadlineMs: number;
  /**
   * Whether a failing batch is split until the failing request stands alone. Off only to show,
   * in a test, what one bad request does to its neighbours without it.
   */
  split: boolean;
};

type Pending = {
  request: BatchRequest;
  settle: (answer: BatchAnswer) => void;
  abandoned: boolean;
  /** Its batch's statement is at the database now: what it decides is not known yet. */
  inFlight: boolean;
  /** An attempt of it failed after it was sent, without a rollback to prove nothing was granted. */
  uncertain: boolean;
  deadlineAt: number;
  timer: NodeJS.Timeout;
};

// Failures that say nothing about one request: the database is slow, unreachable or not ours.
// Splitting would only spend the deadline on more calls that fail the same way.
const BATCH_WIDE: ReadonlySet<UnavailableReason> = new Set([
  "deadline",
  "connection",
  "unreplicated",
  "not_configured",
  "contract_version",
  "statement_timeout",
  "lock_timeout",
]);

/** `may`: the request may have been granted (it reached the database and no answer proved otherwise). */
function unavailable(reason: UnavailableReason, error: unknown, may: boolean): Refused {
  const message =
    reason === "contract_version" && error instanceof Error
      ? `${error.message}; refused to be safe`
      : reason === "not_configured"
        ? "the enforcement schema or functions are missing (not_configured): run npm run db:migrate; refused to be safe"
        : may
          ? `no answer from the database in time (${reason}): the request was sent and may have been granted; retry with the same idempotencyKey to learn which (a request without one is given back when its answer comes)`
          : `the ceiling could not be read (${reason}); refused to be safe, nothing was charged`;
  return { status: "refused", gate: "unavailable", reason, message, mayHaveApplied: may };
}

/**
 * Coalesces concurrent reserve calls from this process into one database call: one lock of the
 * hot rows and one commit per batch, each request still decided alone in arrival order by the
 * database. Pending requests are split evenly across free slots (Coalescer).
 *
 * Batches share no fate: a batch that fails is retried once, then split in halves, each decided
 * (and retried, and split) alone, until the request that fails stands alone and is the only one
 * answered `unavailable`. A batch past its callers' deadline has its connection destroyed (see
 * LanePool), so a silent network frees the slot instead of occupying it for minutes.
 */
export class ReservationBatcher {
  private readonly pending: Coalescer<Pending>;
  private readonly lanes: LanePool;
  private readonly contract = new ContractCheck();
  /** Database calls made and requests they carried (for the bench's mean batch size). */
  readonly stats = { calls: 0, requests: 0 };

  constructor(
    private readonly db: Db,
    private readonly options: BatcherOptions,
  ) {
    this.lanes = new LanePool(db, options.maxInFlight);
    this.pending = new Coalescer({ maxBatch: options.maxBatch, maxInFlight: options.maxInFlight, send: (batch) => this.run(batch) });
  }

  /** Decides one request; `deadlineMs` overrides the batcher's deadline for this call. */
  submit(request: BatchRequest, deadlineMs = this.options.deadlineMs): Promise<BatchAnswer> {
    return new Promise((resolve) => {
      const pending: Pending = {
        request,
        abandoned: false,
        settle: resolve,
        inFlight: false,
        uncertain: false,
        deadlineAt: Date.now() + deadlineMs,
        timer: setTimeout(() => {
          // Past the deadline the caller gets a refusal now; what the batch still decides for it
          // is handled in deliver.
          pending.abandoned = true;
          this.pending.remove(pending);
          noteUnavailable("deadline", 1);
          resolve(unavailable("deadline", undefined, pending.inFlight || pending.uncertain));
        }, deadlineMs),
      };
      this.pending.add(pending);
    });
  }

  private async run(batch: Pending[]): Promise<void> {
    try {
      await this.lanes.run(remainingMs(batch), (db) => this.contract.ensure(db));
    } catch (error) {
      this.fail(batch, classifyFailure(error), error);
      return;
    }
    await this.decide(batch, false);
  }

  private async decide(batch: Pending[], retried: boolean): Promise<void> {
    const live = batch.filter((p) => !p.abandoned);
    if (live.length === 0) return;
    let answers: BatchAnswer[];
    this.stats.calls++;
    this.stats.requests += live.length;
    const requests = live.map((p) => p.request);
    const started = performance.now();
    try {
      answers = await this.lanes.run(remainingMs(live), (db) => {
        for (const p of live) p.inFlight = true;
        return callReserveBatch(db, requests);
      });
      for (const p of live) p.inFlight = false;
      enforcementObserver()?.batch(requests, answers, (performance.now() - started) / 1000);
    } catch (error) {
      enforcementObserver()?.batch(requests, null, (performance.now() - started) / 1000);
      // A statement the server answered with an error rolled back; one cut off may have committed.
      for (const p of live) {
        if (p.inFlight && mayHaveApplied(error, true)) p.uncertain = true;
        p.inFlight = false;
      }
      const reason = classifyFailure(error);
      if (BATCH_WIDE.has(reason) || !this.options.split) return this.fail(live, reason, error);
      // A deadlock or a serialization failure may not come back; a bad request will.
      if (!retried) return this.decide(live, true);
      if (live.length === 1) return this.fail(live, reason, error);
      const half = Math.ceil(live.length / 2);
      await this.decide(live.slice(0, half), false);
      await this.decide(live.slice(half), false);
      return;
    }
    this.deliver(live, answers);
  }

  private deliver(batch: Pending[], answers: BatchAnswer[]): void {
    batch.forEach((p, i) => {
      const answer = answers[i];
      if (!answer) {
        finish(p, unavailable("unknown", undefined, true));
      } else if (!p.abandoned) {
        finish(p, answer);
      } else if (answer.status === "granted" && !answer.replay && p.request.idempotencyKey === undefined) {
        // A late grant nobody will use: give it back. One with an idempotency key stays held:
        // the caller's retry (or a twin in this batch) gets it as a replay, and releasing it
        // under them would answer "granted" for a hold the ledger no longer has. Unclaimed, it
        // expires and counts as spent: the safe direction.
        void releaseQuietly(this.db, answer.reservationId);
      }
    });
  }

  private fail(batch: Pending[], reason: UnavailableReason, error: unknown): void {
    const live = batch.filter((p) => !p.abandoned);
    if (live.length === 0) return;
    noteUnavailable(reason, live.length, error);
    for (const p of live) finish(p, unavailable(reason, error, p.uncertain));
    void logUnavailable(
      this.db,
      live.map((p) => p.request),
      reason,
    );
  }

  /** Opens every batch lane and checks the contract version before the first call needs them. */
  async warm(): Promise<void> {
    await this.lanes.warm();
    await this.lanes.run(this.options.deadlineMs, (db) => this.contract.ensure(db));
  }

  /** Closes the batcher's connections (tests and shutdown). */
  close(): Promise<void> {
    return this.lanes.close();
  }
}

/** The time left before the last caller of a batch gives up. */
function remainingMs(batch: Pending[]): number {
  return Math.max(1, Math.max(...batch.map((p) => p.deadlineAt)) - Date.now());
}

function finish(p: Pending, answer: BatchAnswer): void {
  clearTimeout(p.timer);
  p.settle(answer);
}

type CounterPart = Omit<CeilingRemaining, "limit" | "used" | "remaining"> | Omit<BudgetRemaining, "limit" | "used" | "remaining">;

/**
 * What reserve_batch answers in compact form (contract version 9): a grant names its range of
 * charge entries, and a grant of a batch that fitted whole is null, its id, expiry and range being
 * the request's entries in the per-request arrays. Then chargeUsed is null too: what each charge
 * saw is counted here, from the counters as locked and the charges' amounts. Since version 10 the
 * ids and the lists of numbers come as one comma-separated string each (a jsonb number is a
 * numeric the database makes and copies: hundreds a batch were a twentieth of its work), and a
 * counter's description is counters[counterEntry[k] - 1], each distinct one sent once. Since
 * version 13 reservationIds is null when this library sent the ids (reservation_ids): they are
 * its own, and not sent back. Since version 14 expiresAt is one timestamp, every request's, when
 * the typed entry's ttl_seconds is NULL (no request of the batch named a TTL; the JSON entry, this
 * library's fallback, always sends the list).
 */
export type CompactWire = {
  answers: CompactBatch["answers"];
  reservationIds: string | null;
  expiresAt: string[] | string;
  firstCharge: string;
  lastCharge: string;
  chargeCounter: string;
  chargeLimit: string;
  chargeAmount: string;
  chargeUsed: string | null;
  counterUsed: string;
  counterEntry: string;
  counters: CounterPart[];
};

type CompactBatch = {
  answers: (Exclude<BatchAnswer, Resolved> | SqlResolved | (Omit<Granted, "remaining"> & { charges: [number, number] }) | null)[];
  reservationIds: string[];
  /** Per request, or one for every request. */
  expiresAt: string[] | string;
  firstCharge: number[];
  lastCharge: number[];
  chargeCounter: number[];
  chargeLimit: number[];
  chargeAmount: number[];
  chargeUsed: number[] | null;
  counterUsed: number[];
  /** Per counter (1-based, as chargeCounter names them), its description. */
  counters: CounterPart[];
};

/** A comma-separated list of whole numbers, as array_to_string writes it ("" is no entry). */
function numbers(list: string): number[] {
  return list === "" ? [] : list.split(",").map(Number);
}

function unpack(wire: CompactWire, sentIds: string[] | undefined): CompactBatch {
  const entries = numbers(wire.counterEntry);
  const reservationIds = wire.reservationIds === null ? sentIds : wire.reservationIds === "" ? [] : wire.reservationIds.split(",");
  if (!reservationIds) throw new Error("reserve_batch answer is inconsistent");
  return {
    answers: wire.answers,
    reservationIds,
    expiresAt: wire.expiresAt,
    firstCharge: numbers(wire.firstCharge),
    lastCharge: numbers(wire.lastCharge),
    chargeCounter: numbers(wire.chargeCounter),
    chargeLimit: numbers(wire.chargeLimit),
    chargeAmount: numbers(wire.chargeAmount),
    chargeUsed: wire.chargeUsed === null ? null : numbers(wire.chargeUsed),
    counterUsed: numbers(wire.counterUsed),
    counters: entries.map((e) => {
      const part = wire.counters[e - 1];
      if (!part) throw new Error("reserve_batch answer is inconsistent");
      return part;
    }),
  };
}

/**
 * The batch's charges in order, each seeing its counter as locked plus every charge of the batch on
 * it up to its own: what the database did not compute while it held the counters.
 */
function usedByCharge(batch: CompactBatch): number[] {
  const running = [...batch.counterUsed];
  return batch.chargeCounter.map((k, x) => {
    const used = (running[k - 1] ?? 0) + (batch.chargeAmount[x] ?? 0);
    running[k - 1] = used;
    return used;
  });
}

const QUOTE_OR_BACKSLASH = /[\\"]/;

/**
 * A Postgres array literal of `values`, each quoted (NULL for null or undefined). Built in one
 * pass, each value escaped only when it holds a quote or a backslash: a map, a replace a value and
 * a join were 0.22 µs a request for each field, most of typedArrays' work (now 0.04).
 */
export function arrayLiteral(values: readonly (string | number | null | undefined)[]): string {
  let literal = "{";
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) literal += ",";
    if (v === null || v === undefined) {
      literal += "NULL";
    } else {
      const text = String(v);
      literal += QUOTE_OR_BACKSLASH.test(text) ? `"${text.replace(/[\\"]/g, "\\$&")}"` : `"${text}"`;
    }
  }
  return `${literal}}`;
}

/** A string Postgres takes as it is: no NUL (which fails a whole batch) and no lone surrogate. */
const sendable = (v: unknown): boolean => v === undefined || v === null || (typeof v === "string" && !v.includes("\u0000") && !hasLoneSurrogate(v));

/**
 * `count` new reservation ids, UUIDv7 as the database makes them: the milliseconds now, then the
 * random rest of a version 4 UUID (its variant bits kept). Made here, where a random UUID costs
 * a fraction of a microsecond, not in the database, where each one asked the operating system's
 * random source (8,600 instructions, a thirtieth of a batch's work a request). Unguessable
 * still: an id is what settles or releases a reservation.
 */
export function reservationIds(count: number, now = Date.now()): string[] {
  const ms = now.toString(16).padStart(12, "0");
  const head = `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7`;
  return Array.from({ length: count }, () => head + randomUUID().slice(15));
}

/**
 * The batch as reserve_batch_arrays takes it, one array literal a field (NULL for a field no
 * request has), when every value is of its type (whole numbers, strings Postgres takes, parts an
 * object): the database then checks values, not JSON. Otherwise undefined, and the batch goes as
 * JSON to reserve_batch, whose answers to a value of the wrong type (an amount of "5", a TTL of
 * 1.5) are the contract's. Both give one well-typed request the same answer.
 */
export function typedArrays(requests: readonly BatchRequest[]): (string | null)[] | undefined {
  for (const r of requests) {
    const { endpoint, amount, parts, caller, destination, destinationKey, idempotencyKey, ttlSeconds, requestId } = r as unknown as Record<string, unknown>;
    if (typeof endpoint !== "string" || !sendable(endpoint)) return undefined;
    if (amount !== undefined && amount !== null && !Number.isSafeInteger(amount)) return undefined;
    if (ttlSeconds !== undefined && ttlSeconds !== null && !(Number.isInteger(ttlSeconds) && Math.abs(ttlSeconds as number) < 2 ** 31)) return undefined;
    if (parts !== undefined && parts !== null && (typeof parts !== "object" || Array.isArray(parts))) return undefined;
    if (![caller, destination, destinationKey, idempotencyKey, requestId].every(sendable)) return undefined;
    if (parts && !Object.keys(parts).every(sendable)) return undefined;
  }
  return [
    arrayLiteral(requests.map((r) => r.endpoint)),
    field(requests.map((r) => r.amount)),
    field(requests.map((r) => r.caller)),
    field(requests.map((r) => r.destination)),
    field(requests.map((r) => r.destinationKey)),
    field(requests.map((r) => r.idempotencyKey)),
    field(requests.map((r) => r.ttlSeconds)),
    field(requests.map((r) => r.requestId)),
    field(requests.map((r) => (r.parts ? JSON.stringify(r.parts) : null))),
  ];
}

/**
 * A field no request of the batch has is sent as NULL, which the function reads as NULL for every
 * request: an array of NULLs is parsed and expanded element by element (six of them, a batch of
 * 32 requests on one ceiling with a caller and nothing else: 318,000 instructions, 4% of it).
 */
function field(values: readonly (string | number | null | undefined)[]): string | null {
  return values.every((v) => v === null || v === undefined) ? null : arrayLiteral(values);
}

/**
 * Sends one batch. The database answers in compact form and "remaining" is built here, outside
 * the transaction: formatting it in SQL was most of the time the counters stayed locked.
 */
export async function callReserveBatch(db: Db, requests: BatchRequest[]): Promise<BatchAnswer[]> {
  const prepared = preparedRunner(db);
  const arrays = typedArrays(requests);
  let result: unknown;
  let sentIds: string[] | undefined;
  if (arrays) {
    // Fresh ids for each call: a batch sent again is a new attempt, never the old one's rows.
    sentIds = reservationIds(requests.length);
    const ids = `{${sentIds.join(",")}}`;
    const text =
      "select ceilings.reserve_batch_arrays($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::jsonb[], true, NULL, $10::uuid[]) as batch";
    result = prepared
      ? await prepared(text, [...arrays, ids])
      : await db.execute(
          sql`select ceilings.reserve_batch_arrays(${arrays[0]}::text[], ${arrays[1]}::bigint[], ${arrays[2]}::text[], ${arrays[3]}::text[],
            ${arrays[4]}::text[], ${arrays[5]}::text[], ${arrays[6]}::int[], ${arrays[7]}::text[], ${arrays[8]}::jsonb[], true, NULL, ${ids}::uuid[]) as batch`,
        );
  } else {
    const json = JSON.stringify(requests);
    result = prepared
      ? await prepared("select ceilings.reserve_batch($1::jsonb, true) as batch", [json])
      : await db.execute(sql`select ceilings.reserve_batch(${json}::jsonb, true) as batch`);
  }
  const row = resultRows<{ batch: CompactWire | string }>(result)[0];
  if (!row) throw new Error("reserve_batch returned no row");
  return compactAnswers(row.batch, sentIds);
}

/** Each request's answer from a batch's compact answer (the ids sent with it, if the caller made them). */
export function compactAnswers(wire: CompactWire | string, sentIds?: string[]): BatchAnswer[] {
  const batch = unpack(typeof wire === "string" ? (JSON.parse(wire) as CompactWire) : wire, sentIds);
  const used = batch.chargeUsed ?? usedByCharge(batch);
  return batch.answers.map((answer, i): BatchAnswer => {
    if (answer === null) {
      const reservationId = batch.reservationIds[i];
      const expiresAt = typeof batch.expiresAt === "string" ? batch.expiresAt : batch.expiresAt[i];
      const first = batch.firstCharge[i];
      const last = batch.lastCharge[i];
      if (reservationId === undefined || expiresAt === undefined || first === undefined || last === undefined) {
        throw new Error("reserve_batch answer is inconsistent");
      }
      return { replay: false, status: "granted", expiresAt, reservationId, remaining: remainingOf(batch, used, first, last) };
    }
    if (answer.status === "resolved") {
      const { reservationId, ...resolved } = answer;
      return { ...resolved, existingReservationId: reservationId };
    }
    if (!("charges" in answer)) return answer;
    const { charges } = answer;
    return {
      replay: answer.replay,
      status: answer.status,
      expiresAt: answer.expiresAt,
      reservationId: answer.reservationId,
      remaining: remainingOf(batch, used, charges[0], charges[1]),
    };
  });
}

/**
 * A grant's "remaining", from its charge entries first..last (1-based and inclusive, as in SQL) and
 * `seen`, what each charge saw (the batch's chargeUsed, or usedByCharge's count).
 */
function remainingOf(batch: CompactBatch, seen: number[], first: number, last: number): (CeilingRemaining | BudgetRemaining)[] {
  // Built field by field, in the order the database sends them: rest and spread copies were
  // most of the library's own time per grant.
  const remaining: (CeilingRemaining | BudgetRemaining)[] = [];
  for (let x = first - 1; x < last; x++) {
    const counter = batch.counters[(batch.chargeCounter[x] ?? 0) - 1];
    const limit = batch.chargeLimit[x];
    const used = seen[x];
    if (!counter || limit === undefined || used === undefined) throw new Error("reserve_batch answer is inconsistent");
    if ("budgetId" in counter) {
      const { budgetId, budget, metric, currency, scope, window, windowEnd } = counter;
      remaining.push({ budgetId, budget, metric, currency, scope, window, windowEnd, limit, used, remaining: limit - used });
      continue;
    }
    const { scope, metric, window, ceilingId, windowEnd } = counter;
    remaining.push({ scope, metric, window, ceilingId, windowEnd, limit, used, remaining: limit - used });
  }
  return remaining;
}

async function releaseQuietly(db: Db, reservationId: string): Promise<void> {
  try {
    await db.execute(sql`select ceilings.release(${reservationId}::uuid)`);
  } catch {
    // It expires after its TTL and counts as spent: the safe direction.
  }
}
