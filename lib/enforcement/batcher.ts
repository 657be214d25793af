import { sql } from "drizzle-orm";
import { type Db, preparedRunner, resultRows } from "@/db/client";
import { replaceControlChars } from "@/lib/canonical/caller";
import { Coalescer } from "./coalescer";
import { ContractCheck } from "./contract";
import { LanePool } from "./lanes";
import { enforcementObserver } from "./observer";
import { classifyFailure, noteUnavailable, type UnavailableReason } from "./unavailable";
import type { Gate } from "@/lib/vocabulary";
import type { BatchAnswer, CeilingRemaining, InputErrorCode, Refused, Resolved } from "./types";

/** One request as the SQL batch function takes it. */
export type BatchRequest = {
  endpoint: string;
  amount: number;
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

function unavailable(reason: UnavailableReason, error?: unknown): Refused {
  const message =
    reason === "contract_version" && error instanceof Error
      ? `${error.message}; refused to be safe`
      : reason === "not_configured"
        ? "the enforcement schema or functions are missing (not_configured): run npm run db:migrate; refused to be safe"
        : `the ceiling could not be read (${reason}); refused to be safe`;
  return { status: "refused", gate: "unavailable", message };
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
        deadlineAt: Date.now() + deadlineMs,
        timer: setTimeout(() => {
          // Past the deadline the caller gets a refusal now; what the batch still decides for it
          // is handled in deliver.
          pending.abandoned = true;
          this.pending.remove(pending);
          noteUnavailable("deadline", 1);
          resolve(unavailable("deadline"));
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
      answers = await this.lanes.run(remainingMs(live), (db) => callReserveBatch(db, requests));
      enforcementObserver()?.batch(requests, answers, (performance.now() - started) / 1000);
    } catch (error) {
      enforcementObserver()?.batch(requests, null, (performance.now() - started) / 1000);
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
        finish(p, unavailable("unknown"));
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
    for (const p of live) finish(p, unavailable(reason, error));
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

/** One row of ceilings.reserve_set: an answer (status), or one ceiling a grant charged ("charge"). */
type SetRow = {
  i: number;
  status: "granted" | "refused" | "resolved" | "error" | "charge";
  code: string | null;
  reservation_id: string | null;
  expires_at: string | null;
  replay: boolean | null;
  state: Resolved["state"] | null;
  ceiling_id: number | null;
  lim: number | null;
  used: number | null;
  remaining: number | null;
  retry_at: string | null;
  message: string | null;
  metric: CeilingRemaining["metric"] | null;
  scope: CeilingRemaining["scope"] | null;
  ceiling_window: CeilingRemaining["window"] | null;
};

// Timestamps as JSON writes them (what replays and the dashboard show), counts as float8 (exact to
// 2^53, what amounts are bounded by): postgres.js hands both over without a parser of our own.
const SET_COLUMNS =
  "i, status, code, reservation_id, to_json(expires_at) #>> '{}' as expires_at, replay, state, ceiling_id, " +
  "lim::float8 as lim, used::float8 as used, remaining::float8 as remaining, to_json(retry_at) #>> '{}' as retry_at, " +
  "message, metric, scope, ceiling_window";
const SET_TYPES = ["text[]", "bigint[]", "text[]", "text[]", "text[]", "text[]", "int[]", "text[]"];
const RESERVE_SET = `select ${SET_COLUMNS} from ceilings.reserve_set(${SET_TYPES.map((t, k) => `$${k + 1}::${t}`).join(", ")})`;

/** A Postgres array literal: every element quoted (so "NULL" is a string), absent ones NULL. */
function arrayLiteral(values: (string | number | undefined)[]): string {
  return `{${values.map((v) => (v === undefined ? "NULL" : `"${String(v).replace(/[\\"]/g, "\\$&")}"`)).join(",")}}`;
}

/** reserve_set's eight arrays for a batch, as Postgres array literals, in its parameter order. */
export function reserveSetParams(requests: BatchRequest[]): string[] {
  return [
    arrayLiteral(requests.map((r) => r.endpoint)),
    arrayLiteral(requests.map((r) => r.amount)),
    arrayLiteral(requests.map((r) => r.caller)),
    arrayLiteral(requests.map((r) => r.destination)),
    arrayLiteral(requests.map((r) => r.destinationKey)),
    arrayLiteral(requests.map((r) => r.idempotencyKey)),
    arrayLiteral(requests.map((r) => r.ttlSeconds)),
    arrayLiteral(requests.map((r) => r.requestId)),
  ];
}

/** The answer a row of reserve_set gives, without its "remaining" (added from the charge rows). */
function answerOf(row: SetRow): BatchAnswer {
  const message = row.message ?? "";
  switch (row.status) {
    case "granted":
      return { status: "granted", replay: row.replay ?? false, reservationId: row.reservation_id ?? "", expiresAt: row.expires_at ?? "", remaining: [] };
    case "resolved":
      return { status: "resolved", replay: true, existingReservationId: row.reservation_id ?? "", state: row.state ?? "expired", message };
    case "error":
      return { status: "error", code: row.code as InputErrorCode, message, ...(row.reservation_id ? { reservationId: row.reservation_id } : {}) };
    default: {
      const refused: Refused = { status: "refused", gate: row.code as Gate, message };
      if (row.ceiling_id !== null) refused.ceilingId = row.ceiling_id;
      if (row.lim !== null) refused.limit = row.lim;
      if (row.used !== null) refused.used = row.used;
      if (row.remaining !== null) refused.remaining = row.remaining;
      if (row.retry_at !== null) refused.retryAt = row.retry_at;
      return refused;
    }
  }
}

/**
 * Sends one batch: arrays in, one row per request out, then one row per ceiling each grant
 * charged, from which "remaining" is built here, outside the transaction.
 */
export async function callReserveBatch(db: Db, requests: BatchRequest[]): Promise<BatchAnswer[]> {
  const params = reserveSetParams(requests);
  const prepared = preparedRunner(db);
  const rows = resultRows<SetRow>(
    prepared
      ? await prepared(RESERVE_SET, params)
      : await db.execute(
          sql`select ${sql.raw(SET_COLUMNS)} from ceilings.reserve_set(${sql.join(
            params.map((p, k) => sql`${p}::${sql.raw(SET_TYPES[k] ?? "text[]")}`),
            sql`, `,
          )})`,
        ),
  );
  const answers: BatchAnswer[] = [];
  for (const row of rows) {
    if (row.status !== "charge") {
      answers[row.i - 1] = answerOf(row);
      continue;
    }
    const grant = answers[row.i - 1];
    if (grant?.status !== "granted" || row.ceiling_id === null || row.lim === null || row.used === null || row.remaining === null)
      throw new Error("reserve_set answer is inconsistent");
    grant.remaining.push({
      scope: row.scope ?? "global",
      metric: row.metric ?? "units",
      window: row.ceiling_window ?? "utc_day",
      ceilingId: row.ceiling_id,
      windowEnd: row.retry_at ?? "",
      limit: row.lim,
      used: row.used,
      remaining: row.remaining,
    });
  }
  if (answers.length !== requests.length) throw new Error("reserve_set answered another number of requests");
  return answers;
}

async function releaseQuietly(db: Db, reservationId: string): Promise<void> {
  try {
    await db.execute(sql`select ceilings.release(${reservationId}::uuid)`);
  } catch {
    // It expires after its TTL and counts as spent: the safe direction.
  }
}

// A refusal must be storable even when its request was what failed (a NUL in the caller).
const storable = replaceControlChars;

/** Best effort: when the database answers again, the refusals are stored like any other. */
async function logUnavailable(db: Db, requests: BatchRequest[], reason: UnavailableReason): Promise<void> {
  if (["connection", "not_configured", "contract_version", "deadline"].includes(reason) || requests.length === 0) return;
  const items = requests.map((r) => ({
    endpointKey: storable(r.endpoint),
    gate: "unavailable",
    caller: storable(r.caller ?? ""),
    destination: storable(r.destinationKey ?? r.destination?.trim().toLowerCase() ?? ""),
    amount: r.amount,
    requestId: r.requestId === undefined ? undefined : storable(r.requestId),
    detail: reason,
  }));
  try {
    await db.execute(sql`select ceilings.log_refusals(${JSON.stringify(items)}::jsonb)`);
  } catch {
    // Already on stderr and in the in-process counters.
  }
}
