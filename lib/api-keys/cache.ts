import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { type Database, type Db, listenOn, siblingOpener } from "@/db/client";
import { answerBy, LanePool } from "@/lib/enforcement/lanes";
import { LANES } from "@/lib/connection-bound";
import { env } from "@/lib/env";
import { logError } from "@/lib/log/redact";
import { type Authentication, type KeySource, lookUpKey } from "./authenticate";

// Reading the API key was the most expensive step of a cheap HTTP call. This cache keeps live keys
// in the process and bounds how long a revoked one can pass. A trigger on api_keys (migration
// 0015) notifies every change of a key on CHANNEL at commit, and each notification empties the
// cache. Every PING_MS the process also notifies itself, with the time it sent the ping, and the
// cache answers from memory only while its newest ping heard back was sent less than STALE_MS ago.
// Postgres delivers notifications in commit order, so once a ping sent at s is heard, every
// change committed before s has been heard too: a revoked key passes at most STALE_MS after its
// revoke committed, however slow or cut the LISTEN connection is, and usually only as long as
// its notification takes. Otherwise every request reads its key, within the deadline, on lanes
// of its own, or shares a read of the same key that started less than STALE_MS before it (which
// sees every revoke committed before the request's own STALE_MS window); a LISTEN connection
// that stays silent is replaced.

export const API_KEYS_CHANNEL = "ceilings_api_keys";
const LISTEN_TIMEOUT_MS = 10_000;

type KeyRead = { startedAt: number; generation: number; answer: Promise<Authentication> };

export type ApiKeyCacheOptions = {
  pingMs?: number;
  staleMs?: number;
  /** The pool to LISTEN through, if not the lookups' own (a test cuts it alone). */
  listenDb?: Db;
};

export class ApiKeyCache implements KeySource {
  private readonly live = new Map<string, Authentication & { ok: true }>();
  /** Key reads under way: when each started, the cache's generation then, and its answer. */
  private readonly reading = new Map<string, KeyRead>();
  /** Bumped by every clear: a read that started before a change must not fill the cache after it. */
  private generation = 0;
  private readonly instance = randomUUID();
  /** When the newest of our own pings heard back was sent (performance.now()). */
  private newestSent = -Infinity;
  private pinger: NodeJS.Timeout | undefined;
  private listener: { database?: Database; unlisten: () => Promise<void> } | undefined;
  private listening: Promise<void> | undefined;
  /** The connection a listen under way opened, closed with the cache if it is still opening. */
  private connecting: Database | undefined;
  private lastListenAt = -Infinity;
  private closed = false;
  private readonly lanes: LanePool;
  private readonly pingLane: LanePool;
  private readonly pingMs: number;
  private readonly staleMs: number;
  /** Lookups answered from memory and from the database (tests and the bench). */
  readonly stats = { hits: 0, reads: 0, listens: 0 };

  private constructor(
    private readonly db: Db,
    private readonly listenDb: Db,
    options: ApiKeyCacheOptions,
  ) {
    this.pingMs = options.pingMs ?? 100;
    this.staleMs = options.staleMs ?? 500;
    // Key reads on connections of their own, given up at the deadline: a silent network answers
    // 503 in time instead of holding the request.
    this.lanes = new LanePool(db, LANES.keyLookup);
    // Pings on a lane of their own: queued behind the lookups of an untrusted cache (64 callers
    // in test:ha), every ping missed staleMs, so the cache never became trusted again under load.
    this.pingLane = new LanePool(db, LANES.keyPing);
  }

  /** Starts listening (a pool of its own for lookups: key reads never wait behind reservation batches). */
  static async start(db: Db, options: ApiKeyCacheOptions = {}): Promise<ApiKeyCache> {
    const cache = new ApiKeyCache(db, options.listenDb ?? db, options);
    await cache.listen();
    cache.pinger = setInterval(() => {
      void cache.ping();
      // Silent for a while (a cut connection, a database that was down at start): listen afresh.
      const silentFor = performance.now() - Math.max(cache.newestSent, cache.lastListenAt);
      if (silentFor > cache.staleMs * 4 && !cache.listening) void cache.listen();
    }, cache.pingMs);
    cache.pinger.unref();
    return cache;
  }

  /** Whether cached keys may answer: a ping of ours sent less than staleMs ago has come back. */
  get trusted(): boolean {
    return this.listener !== undefined && performance.now() - this.newestSent < this.staleMs;
  }

  async lookUp(_db: Db, secretHash: string): Promise<Authentication> {
    if (!this.trusted) {
      if (this.live.size > 0) this.clear();
      return this.read(secretHash).answer;
    }
    const hit = this.live.get(secretHash);
    if (hit) {
      this.stats.hits++;
      return hit;
    }
    const read = this.read(secretHash);
    const found = await read.answer;
    // Only live keys are kept: an unknown or revoked token reads again (it is not the hot path).
    // Kept only if nothing changed since the read began (a shared read may predate this call).
    if (found.ok && read.generation === this.generation && this.trusted) this.live.set(secretHash, found);
    return found;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pinger);
    this.clear();
    void this.connecting?.destroy?.().catch(() => {});
    await this.dropListener();
    await Promise.all([this.lanes.close(), this.pingLane.close()]);
  }

  /**
   * Reads a key, or shares a read of it that began less than staleMs ago. While the cache is not
   * trusted every request reads: 64 connections on one key were 64 reads queued on two lanes with
   * the pings behind them, so the cache stayed untrusted (bench:http on a loaded machine fell to
   * about 75 calls a second).
   */
  private read(secretHash: string): KeyRead {
    const under = this.reading.get(secretHash);
    if (under && performance.now() - under.startedAt < this.staleMs) return under;
    this.stats.reads++;
    const deadlineMs = env().ENFORCEMENT_DEADLINE_MS;
    const read: KeyRead = {
      startedAt: performance.now(),
      generation: this.generation,
      answer: answerBy(
        this.lanes.run(deadlineMs, (lane) => lookUpKey(lane, secretHash)),
        deadlineMs,
      ),
    };
    this.reading.set(secretHash, read);
    const done = () => {
      if (this.reading.get(secretHash) === read) this.reading.delete(secretHash);
    };
    read.answer.then(done, done);
    return read;
  }

  /** (Re)listens on a connection of its own, replacing the one before; failures are retried by the pinger. */
  private listen(): Promise<void> {
    this.listening ??= (async () => {
      this.stats.listens++;
      await this.dropListener();
      if (this.closed) return;
      const database = siblingOpener(this.listenDb)?.(1);
      this.connecting = database;
      const on = database?.db ?? this.listenDb;
      try {
        const subscribed = listenOn(
          on,
          API_KEYS_CHANNEL,
          (payload) => this.heard(payload),
          () => this.clear(),
        );
        if (!subscribed) throw new Error("no server pool to listen on");
        // A connection's start takes a few round trips: give it time, whatever staleMs is.
        const { unlisten } = await answerBy(subscribed, LISTEN_TIMEOUT_MS);
        if (this.closed) throw new Error("closed while listening");
        this.listener = { database, unlisten };
      } catch (error) {
        void database?.destroy?.().catch(() => {});
        if (this.stats.listens === 1) logError("api keys: cannot listen for key changes yet; every request reads its key until it can", error);
      }
    })().finally(() => {
      // Silence is counted from here: a connection that took long to open is not silent yet.
      this.lastListenAt = performance.now();
      this.connecting = undefined;
      this.listening = undefined;
    });
    return this.listening;
  }

  private async dropListener(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    this.clear();
    if (!listener) return;
    if (listener.database) {
      // Closing its own pool ends a silent connection at once; UNLISTEN would wait on it.
      await (listener.database.destroy?.() ?? listener.database.close()).catch(() => {});
    } else {
      await answerBy(listener.unlisten(), 1000).catch(() => {});
    }
  }

  private heard(payload: string): void {
    const [kind, instance, sent] = payload.split(":");
    if (kind === "ping") {
      if (instance === this.instance) this.newestSent = Math.max(this.newestSent, Number(sent));
      return;
    }
    this.clear();
  }

  private clear(): void {
    this.generation++;
    this.live.clear();
  }

  private async ping(): Promise<void> {
    const payload = `ping:${this.instance}:${performance.now()}`;
    try {
      // On its lane, given up within staleMs: a silent connection does not collect pings.
      await this.pingLane.run(this.staleMs, (lane) => lane.execute(sql`select pg_notify(${API_KEYS_CHANNEL}, ${payload})`));
    } catch {
      // Unanswered pings let the cache go stale, which is the point: no log line per tick.
    }
  }
}
