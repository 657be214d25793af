import { sql } from "drizzle-orm";
import { type Database, type Db, resultRows, type SiblingOpener, siblingOpener } from "@/db/client";

/** A database call abandoned at its deadline; its connection was destroyed. Retrying is safe. */
export class DeadlineError extends Error {
  override name = "DeadlineError";
  readonly code = "DEADLINE";
  readonly retryable = true;
  constructor(readonly deadlineMs: number) {
    super(`no answer from the database within ${deadlineMs} ms`);
  }
}

/**
 * The server committed the call's transaction locally but its wait for the synchronous standby was
 * cut short (a statement timeout or a cancel): on a failover now the new primary may not have it.
 * Its answer must not be told as a grant; what it held locally expires and counts as spent.
 */
export class UnreplicatedError extends Error {
  override name = "UnreplicatedError";
  readonly code = "UNREPLICATED";
  constructor() {
    super("the commit was not confirmed by the synchronous standby (its wait was cancelled)");
  }
}

type Lane = { database: Database | undefined; db: Db; pid?: number; usedAt?: number; unreplicated?: boolean };

// What PostgreSQL warns (syncrep.c, no SQLSTATE of its own) when a commit's wait for the
// synchronous standby ends by a cancel or a terminate: the transaction stays committed locally.
const SYNC_WAIT_CUT = /canceling (the )?wait for synchronous replication/i;

// A lane's connection closes after 30 idle seconds (openPostgres) and postgres.js opens a new one
// on the next call: its backend pid is then another. Past this, the pid is read again.
const PID_FRESH_MS = 25_000;

// After the deadline, how long a cancelled statement may take to come back (with its error, or
// with the answer it had already committed) before its connection is destroyed.
const CANCEL_GRACE_MS = 500;

/**
 * Enforcement calls, each on a one-connection pool of its own ("lane"), at most `size` at once.
 * Past its deadline a call's statement is cancelled on the server; if neither its error nor its
 * answer comes back within a short grace, its lane is destroyed and a new one opens for the next
 * call. A database that stops answering (a network cut) thus frees the slot at the deadline
 * instead of holding it until TCP gives up, and calls are decided again as soon as the network
 * heals. An answer that does come back late is returned (the batcher gives late grants back). A
 * handle without a server URL (the embedded engine) runs on itself, with the deadline answering
 * the caller but nothing to cancel or destroy.
 */
export class LanePool {
  private readonly idle: Lane[] = [];
  private busy = 0;
  private readonly waiters: (() => void)[] = [];
  private readonly open: SiblingOpener | undefined;

  constructor(
    private readonly db: Db,
    private readonly size: number,
    /** The grace after a cancel (CANCEL_GRACE_MS); a test of the kept-lane path on a loaded machine gives it more. */
    private readonly cancelGraceMs = CANCEL_GRACE_MS,
  ) {
    this.open = siblingOpener(db);
  }

  /** Runs `work` on a lane within `deadlineMs` (waiting for a free lane counts), else DeadlineError. */
  async run<T>(deadlineMs: number, work: (db: Db) => Promise<T>): Promise<T> {
    const until = Date.now() + deadlineMs;
    let lane: Lane | undefined;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => {
          reject(new DeadlineError(deadlineMs));
        },
        Math.max(0, until - Date.now()),
      );
    });
    const acquiring = this.acquire();
    let destroy = false;
    try {
      lane = await Promise.race([acquiring, deadline]);
      const current = lane;
      // The pid a deadline's cancel is sent to must be this connection's own: a stale one would
      // cancel nothing, or another backend's statement once the pid is reused.
      if (current.usedAt !== undefined && Date.now() - current.usedAt > PID_FRESH_MS) current.pid = undefined;
      current.usedAt = Date.now();
      current.unreplicated = false;
      const working = (async () => {
        if (current.database && current.pid === undefined) current.pid = await backendPid(current.db);
        const value = await work(current.db);
        // The warning arrives before the answer it belongs to, on this lane's one connection.
        if (current.unreplicated) throw new UnreplicatedError();
        return value;
      })();
      try {
        return await Promise.race([working, deadline]);
      } catch (error) {
        if (!(error instanceof DeadlineError)) {
          // The connection may be gone (postgres.js opens another on the next call): read its pid again.
          current.pid = undefined;
          throw error;
        }
        const late = await this.cancel(current, working);
        if (late.settled) {
          if (late.ok) return late.value;
          throw error;
        }
        destroy = true;
        throw error;
      }
    } finally {
      clearTimeout(timer);
      if (lane) this.giveBack(lane, destroy);
      else void acquiring.then((l) => this.giveBack(l, false));
    }
  }

  /** Cancels the lane's statement and waits a little for it to come back. */
  private async cancel<T>(lane: Lane, working: Promise<T>): Promise<{ settled: false } | { settled: true; ok: true; value: T } | { settled: true; ok: false }> {
    const outcome = working.then(
      (value) => ({ settled: true as const, ok: true as const, value }),
      () => ({ settled: true as const, ok: false as const }),
    );
    if (!this.open || lane.pid === undefined) return { settled: false };
    const canceller = this.open(1);
    const pid = lane.pid;
    void canceller.db.execute(sql`select pg_cancel_backend(${pid})`).catch(() => {});
    let grace: NodeJS.Timeout | undefined;
    const gave = new Promise<{ settled: false }>((resolve) => {
      grace = setTimeout(() => resolve({ settled: false }), this.cancelGraceMs);
    });
    try {
      return await Promise.race([outcome, gave]);
    } finally {
      clearTimeout(grace);
      void (canceller.destroy?.() ?? canceller.close()).catch(() => {});
    }
  }

  private async acquire(): Promise<Lane> {
    while (this.busy >= this.size) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.busy++;
    return this.idle.pop() ?? this.openLane();
  }

  private openLane(): Lane {
    // The server checks the client's socket during a query, so a statement whose connection was
    // destroyed at the deadline is aborted instead of committing a grant nobody receives.
    const lane: Lane = { database: undefined, db: this.db };
    lane.database = this.open?.(
      1,
      { client_connection_check_interval: 100 },
      (notice) => {
        if (SYNC_WAIT_CUT.test(notice.message ?? "")) lane.unreplicated = true;
      },
      // A lane's one connection closed (the server ended it, a failover): postgres.js opens another
      // on the next call, often without an error, and the pid held is another backend's now. A
      // deadline's cancel sent to it cancelled nothing (seen on CI), or would cancel a stranger's
      // statement once the pid is reused; so it is read again before the next call.
      () => {
        lane.pid = undefined;
      },
    );
    lane.db = lane.database?.db ?? this.db;
    return lane;
  }

  private giveBack(lane: Lane, destroy: boolean): void {
    if (destroy && lane.database) {
      // The query is failed at once; the socket goes when the kernel gives it up.
      void lane.database.destroy?.().catch(() => {});
    } else {
      this.idle.push(lane);
    }
    this.busy--;
    this.waiters.shift()?.();
  }

  /**
   * Opens every lane now, connected and with its backend pid, so the first calls pay no connection
   * set-up (which on a loaded server took longer than the deadline).
   */
  async warm(): Promise<void> {
    if (!this.open) return;
    const lanes = Array.from({ length: this.size - this.busy - this.idle.length }, () => this.openLane());
    const connected = await Promise.allSettled(
      lanes.map(async (lane) => {
        lane.pid ??= await backendPid(lane.db);
      }),
    );
    lanes.forEach((lane, i) => {
      // Never more lanes than the pool's size, even if calls opened some meanwhile.
      if (connected[i]?.status === "fulfilled" && this.busy + this.idle.length < this.size) this.idle.push(lane);
      else void lane.database?.destroy?.().catch(() => {});
    });
    const failed = connected.find((c) => c.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** Closes the idle lanes (tests and shutdown). */
  async close(): Promise<void> {
    const lanes = this.idle.splice(0);
    await Promise.all(lanes.map((l) => l.database?.close()));
  }
}

/**
 * `work` or, if it has not answered `deadlineMs` after this call, a DeadlineError at that moment.
 * LanePool.run may take up to its cancel grace (and a new connection) longer to give up; a caller
 * promised a deadline is answered at it, while the abandoned call cleans up behind it.
 */
export function answerBy<T>(work: Promise<T>, deadlineMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(deadlineMs)), deadlineMs);
  });
  // Once abandoned, the call's own failure is nobody's: it must not surface as unhandled.
  work.catch(() => {});
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

async function backendPid(db: Db): Promise<number> {
  const rows = resultRows<{ pid: number }>(await db.execute(sql`select pg_backend_pid() as pid`));
  const pid = rows[0]?.pid;
  if (typeof pid !== "number") throw new Error("no backend pid");
  return pid;
}
