import { sql } from "drizzle-orm";
import { type Db, listenOn } from "@/db/client";
import { logError } from "@/lib/log/redact";
import { type Authentication, type KeySource, lookUpKey } from "./authenticate";

// Reading the API key was the most expensive step of a cheap HTTP call. This cache keeps live keys
// in the process and stays exact: a trigger on api_keys (migration 0015) notifies every change of
// a key on CHANNEL at commit, and each notification empties the cache. It is trusted only while its
// LISTEN connection is known to work: every PING_MS the process notifies itself through its pool,
// and if no notification came back within STALE_MS (a connection cut, even a silent one) the cache
// is emptied and every request reads its key from the database until they flow again.

export const API_KEYS_CHANNEL = "ceilings_api_keys";
const PING_PAYLOAD = "ping";

export type ApiKeyCacheOptions = {
  pingMs?: number;
  staleMs?: number;
  /** The pool to LISTEN on, if not the lookups' own (a test cuts it alone). */
  listenDb?: Db;
};

export class ApiKeyCache implements KeySource {
  private readonly live = new Map<string, Authentication & { ok: true }>();
  /** Bumped by every clear: a read that started before a change must not fill the cache after it. */
  private generation = 0;
  private heardAt = -Infinity;
  private pinger: NodeJS.Timeout | undefined;
  private subscription: { unlisten: () => Promise<void> } | undefined;
  private readonly pingMs: number;
  private readonly staleMs: number;
  /** Lookups answered from memory and from the database (tests and the bench). */
  readonly stats = { hits: 0, reads: 0 };

  private constructor(
    private readonly db: Db,
    options: ApiKeyCacheOptions,
  ) {
    this.pingMs = options.pingMs ?? 200;
    this.staleMs = options.staleMs ?? 1000;
  }

  /**
   * Starts listening on `db` (a pool of its own: key lookups never wait behind reservation
   * batches). Without a server pool to listen on, the cache stays off and every lookup reads.
   */
  static async start(db: Db, options: ApiKeyCacheOptions = {}): Promise<ApiKeyCache> {
    const cache = new ApiKeyCache(db, options);
    try {
      cache.subscription = await listenOn(
        options.listenDb ?? db,
        API_KEYS_CHANNEL,
        (payload) => cache.heard(payload),
        () => cache.clear(),
      );
    } catch (error) {
      logError("api keys: cannot listen for key changes; every request reads its key", error);
    }
    cache.pinger = setInterval(() => void cache.ping(), cache.pingMs);
    cache.pinger.unref();
    return cache;
  }

  /** Whether cached keys may answer: a notification arrived within the last STALE_MS. */
  get trusted(): boolean {
    return this.subscription !== undefined && performance.now() - this.heardAt < this.staleMs;
  }

  async lookUp(_db: Db, secretHash: string): Promise<Authentication> {
    if (!this.trusted) {
      if (this.live.size > 0) this.clear();
      this.stats.reads++;
      return lookUpKey(this.db, secretHash);
    }
    const hit = this.live.get(secretHash);
    if (hit) {
      this.stats.hits++;
      return hit;
    }
    const generation = this.generation;
    this.stats.reads++;
    const found = await lookUpKey(this.db, secretHash);
    // Only live keys are kept: an unknown or revoked token reads again (it is not the hot path).
    if (found.ok && generation === this.generation && this.trusted) this.live.set(secretHash, found);
    return found;
  }

  async close(): Promise<void> {
    clearInterval(this.pinger);
    this.clear();
    const subscription = this.subscription;
    this.subscription = undefined;
    // UNLISTEN waits for an answer a silent connection never gives; closing the pool ends it anyway.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([subscription?.unlisten().catch(() => {}), new Promise((r) => (timer = setTimeout(r, 1000)))]);
    clearTimeout(timer);
  }

  private heard(payload: string): void {
    this.heardAt = performance.now();
    // A ping proves the connection works; anything else is a change of some key.
    if (payload !== PING_PAYLOAD) this.clear();
  }

  private clear(): void {
    this.generation++;
    this.live.clear();
  }

  private async ping(): Promise<void> {
    try {
      await this.db.execute(sql`select pg_notify(${API_KEYS_CHANNEL}, ${PING_PAYLOAD})`);
    } catch {
      // Unanswered pings let the cache go stale, which is the point: no log line per tick.
    }
  }
}
