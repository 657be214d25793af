import { sql } from "drizzle-orm";
import { type Db, preparedRunner, resultRows } from "@/db/client";
import type { LanePool } from "./lanes";
import type { InputErrorCode, Resolution } from "./types";

/** One settle or release as ceilings.resolve_batch takes it. */
export type ResolveItem = { id: string; verb: "settle" | "release"; actual?: number; caller?: string };
export type ResolveAnswer = Resolution | { status: "error"; code: InputErrorCode; message: string };

type Pending = { item: ResolveItem; deadlineAt: number; resolve: (a: ResolveAnswer) => void; reject: (e: unknown) => void };

/**
 * Coalesces this process's concurrent settles and releases into one database call
 * (ceilings.resolve_batch): one lock of each hot counter and one commit per batch, each item still
 * decided alone, in order. Batches are split evenly across the free lanes, as reservations are. A
 * batch that fails fails its items (the caller answers `unavailable`; settle and release are
 * idempotent, so the retry tells whether it was applied). Items whose caller gave up before they
 * were sent are not sent.
 */
export class ResolveBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Database calls made and items they carried. */
  readonly stats = { calls: 0, items: 0 };

  constructor(
    private readonly lanes: LanePool,
    private readonly maxInFlight: number,
    private readonly maxBatch = 128,
  ) {}

  submit(item: ResolveItem, deadlineMs: number): Promise<ResolveAnswer> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, deadlineAt: Date.now() + deadlineMs, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    // One turn of the event loop, so calls arriving together share a batch.
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    const now = Date.now();
    this.queue = this.queue.filter((p) => p.deadlineAt > now);
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const size = Math.min(this.maxBatch, Math.ceil(this.queue.length / (this.maxInFlight - this.inFlight)));
      const batch = this.queue.splice(0, size);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.schedule();
      });
    }
  }

  private async run(batch: Pending[]): Promise<void> {
    this.stats.calls++;
    this.stats.items += batch.length;
    const remaining = Math.max(1, Math.max(...batch.map((p) => p.deadlineAt)) - Date.now());
    try {
      const answers = await this.lanes.run(remaining, (db) => callResolveBatch(db, batch.map((p) => p.item)));
      batch.forEach((p, i) => {
        const answer = answers[i];
        if (answer) p.resolve(answer);
        else p.reject(new Error("resolve_batch answered fewer items than it was sent"));
      });
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  }
}

/** One call of ceilings.resolve_batch, as a prepared statement of the lane when it can be. */
export async function callResolveBatch(db: Db, items: ResolveItem[]): Promise<ResolveAnswer[]> {
  const json = JSON.stringify(items);
  const prepared = preparedRunner(db);
  const result = prepared
    ? await prepared("select ceilings.resolve_batch($1::jsonb) as answers", [json])
    : await db.execute(sql`select ceilings.resolve_batch(${json}::jsonb) as answers`);
  const row = resultRows<{ answers: ResolveAnswer[] | string }>(result)[0];
  if (!row) throw new Error("resolve_batch returned no row");
  return typeof row.answers === "string" ? (JSON.parse(row.answers) as ResolveAnswer[]) : row.answers;
}
