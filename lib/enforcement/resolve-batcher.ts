import { sql } from "drizzle-orm";
import { type Db, preparedRunner, resultRows } from "@/db/client";
import { Coalescer } from "./coalescer";
import type { LanePool } from "./lanes";
import type { InputErrorCode, Resolution } from "./types";

/** One settle or release as ceilings.resolve_batch takes it. */
export type ResolveItem = { id: string; verb: "settle" | "release"; actual?: number; parts?: Record<string, number>; caller?: string };
export type ResolveAnswer = Resolution | { status: "error"; code: InputErrorCode; message: string };

type Pending = { item: ResolveItem; deadlineAt: number; onSent?: () => boolean; resolve: (a: ResolveAnswer) => void; reject: (e: unknown) => void };

/**
 * Coalesces this process's concurrent settles and releases into one database call
 * (ceilings.resolve_batch): one lock of each hot counter and one commit per batch, each item still
 * decided alone, in order. Batches are split evenly across the free lanes, as reservations are. A
 * batch that fails fails its items (the caller answers `unavailable`; settle and release are
 * idempotent, so the retry tells whether it was applied). Items whose caller gave up before they
 * were sent are not sent.
 */
export class ResolveBatcher {
  private readonly pending: Coalescer<Pending>;
  /** Database calls made and items they carried. */
  readonly stats = { calls: 0, items: 0 };

  constructor(
    private readonly lanes: LanePool,
    maxInFlight: number,
    maxBatch = 128,
  ) {
    this.pending = new Coalescer({ maxBatch, maxInFlight, send: (batch) => this.run(batch), wanted: (p) => p.deadlineAt > Date.now() });
  }

  /**
   * `onSent` is asked right before the item's statement goes to the database (from then it may
   * commit); false (its caller was already answered "not applied") leaves the item out.
   */
  submit(item: ResolveItem, deadlineMs: number, onSent?: () => boolean): Promise<ResolveAnswer> {
    return new Promise((resolve, reject) => {
      this.pending.add({ item, deadlineAt: Date.now() + deadlineMs, onSent, resolve, reject });
    });
  }

  private async run(batch: Pending[]): Promise<void> {
    this.stats.calls++;
    this.stats.items += batch.length;
    const remaining = Math.max(1, Math.max(...batch.map((p) => p.deadlineAt)) - Date.now());
    // Left out at the last moment: the items whose callers gave up while a lane was awaited.
    let sent: Pending[] = [];
    try {
      const answers = await this.lanes.run(remaining, (db) => {
        sent = batch.filter((p) => p.onSent?.() !== false);
        return sent.length === 0
          ? Promise.resolve([])
          : callResolveBatch(
              db,
              sent.map((p) => p.item),
            );
      });
      sent.forEach((p, i) => {
        const answer = answers[i];
        if (answer) p.resolve(answer);
        else p.reject(new Error("resolve_batch answered fewer items than it was sent"));
      });
      for (const p of batch) if (!sent.includes(p)) p.reject(new Error("not sent: its caller had given up"));
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
