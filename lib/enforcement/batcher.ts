import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { enforcementObserver } from "./observer";
import { classifyFailure, noteUnavailable, type UnavailableReason } from "./unavailable";
import type { BatchAnswer, CeilingRemaining, Granted, Refused } from "./types";

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
  /** Batches in flight at once; bounded by the enforcement pool. */
  maxInFlight: number;
  /** A caller gets a decision within this many milliseconds, whatever the database does. */
  deadlineMs: number;
};

type Pending = {
  request: BatchRequest;
  settle: (answer: BatchAnswer) => void;
  abandoned: boolean;
  timer: NodeJS.Timeout;
};

function unavailable(reason: UnavailableReason): Refused {
  return { status: "refused", gate: "unavailable", message: `the ceiling could not be read (${reason}); refused to be safe` };
}

/**
 * Coalesces concurrent reserve calls from this process into one database call: one lock of the
 * hot rows and one commit per batch, each request still decided alone in arrival order by the
 * database. Pending requests are split evenly across free slots, since lopsided batches (1, then
 * 60) measured about a quarter slower than even ones.
 */
export class ReservationBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly options: BatcherOptions,
  ) {}

  submit(request: BatchRequest): Promise<BatchAnswer> {
    return new Promise((resolve) => {
      const pending: Pending = {
        request,
        abandoned: false,
        settle: resolve,
        timer: setTimeout(() => {
          // Past the deadline the caller gets a refusal now; should the batch still grant it
          // later, the grant is released (see run).
          pending.abandoned = true;
          this.queue = this.queue.filter((p) => p !== pending);
          noteUnavailable("deadline", 1);
          resolve(unavailable("deadline"));
        }, this.options.deadlineMs),
      };
      this.queue.push(pending);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    // Wait one turn of the event loop so callers arriving together share a batch.
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const free = this.options.maxInFlight - this.inFlight;
      const size = Math.min(this.options.maxBatch, Math.ceil(this.queue.length / free));
      const batch = this.queue.splice(0, size);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  private async run(batch: Pending[]): Promise<void> {
    let answers: BatchAnswer[];
    const requests = batch.map((p) => p.request);
    const started = performance.now();
    try {
      answers = await callReserveBatch(this.db, requests);
      enforcementObserver()?.batch(requests, answers, (performance.now() - started) / 1000);
    } catch (error) {
      enforcementObserver()?.batch(requests, null, (performance.now() - started) / 1000);
      const reason = classifyFailure(error);
      const live = batch.filter((p) => !p.abandoned);
      noteUnavailable(reason, live.length, error);
      for (const p of live) finish(p, unavailable(reason));
      void logUnavailable(this.db, live.map((p) => p.request), reason);
      return;
    }
    batch.forEach((p, i) => {
      const answer = answers[i];
      if (!answer) {
        finish(p, unavailable("unknown"));
      } else if (p.abandoned) {
        if (answer.status === "granted" && !answer.replay) void releaseQuietly(this.db, answer.reservationId);
      } else {
        finish(p, answer);
      }
    });
  }
}

function finish(p: Pending, answer: BatchAnswer): void {
  clearTimeout(p.timer);
  p.settle(answer);
}

/** What reserve_batch answers in compact mode: a grant names its range of rc entries. */
type CompactBatch = {
  answers: (BatchAnswer | (Omit<Granted, "remaining"> & { rc: [number, number] }))[];
  rcCounter: number[];
  rcLimit: number[];
  rcUsed: number[];
  counters: Omit<CeilingRemaining, "limit" | "used" | "remaining">[];
};

/**
 * Sends one batch. The database answers in compact form and "remaining" is built here, outside
 * the transaction: formatting it in SQL was most of the time the counters stayed locked.
 */
export async function callReserveBatch(db: Db, requests: BatchRequest[]): Promise<BatchAnswer[]> {
  const result = await db.execute(sql`select ceilings.reserve_batch(${JSON.stringify(requests)}::jsonb, true) as batch`);
  const row = resultRows<{ batch: CompactBatch | string }>(result)[0];
  if (!row) throw new Error("reserve_batch returned no row");
  const batch = typeof row.batch === "string" ? (JSON.parse(row.batch) as CompactBatch) : row.batch;
  return batch.answers.map((answer) => {
    if (!("rc" in answer)) return answer;
    const { rc, ...granted } = answer;
    const remaining: CeilingRemaining[] = [];
    // rc ranges are 1-based and inclusive, as in SQL.
    for (let x = rc[0] - 1; x < rc[1]; x++) {
      const counter = batch.counters[(batch.rcCounter[x] ?? 0) - 1];
      const limit = batch.rcLimit[x];
      const used = batch.rcUsed[x];
      if (!counter || limit === undefined || used === undefined) throw new Error("reserve_batch answer is inconsistent");
      remaining.push({ ...counter, limit, used, remaining: limit - used });
    }
    return { ...granted, remaining };
  });
}

async function releaseQuietly(db: Db, reservationId: string): Promise<void> {
  try {
    await db.execute(sql`select ceilings.release(${reservationId}::uuid)`);
  } catch {
    // It expires after its TTL and counts as spent: the safe direction.
  }
}

/** Best effort: when the database answers again, the refusals are stored like any other. */
async function logUnavailable(db: Db, requests: BatchRequest[], reason: UnavailableReason): Promise<void> {
  if (reason === "connection" || reason === "not_configured" || requests.length === 0) return;
  const items = requests.map((r) => ({
    endpointKey: r.endpoint,
    gate: "unavailable",
    caller: r.caller ?? "",
    destination: r.destinationKey ?? r.destination?.trim().toLowerCase() ?? "",
    amount: r.amount,
    requestId: r.requestId,
    detail: reason,
  }));
  try {
    await db.execute(sql`select ceilings.log_refusals(${JSON.stringify(items)}::jsonb)`);
  } catch {
    // Already on stderr and in the in-process counters.
  }
}
