import { env, type Env } from "@/lib/env";

// The most connections one process of the app opens to the database, with its settings: what
// `max_connections` must be sized from (npm run ha, docs/production.md). Every pool here is
// bounded by its own size; a failover replaces connections, it never adds to them (a lane
// destroyed at its deadline, or a pool destroyed while it connects, has its socket destroyed at
// once: db/multi-host.ts PoolSockets).

/**
 * Lanes each LanePool holds, read here by the pools themselves so the bound cannot drift from them:
 * reservations (lib/enforcement/reserve.ts), settle and release (resolve.ts), key lookups and the
 * key cache's pings (lib/api-keys/cache.ts).
 */
export const LANES = { reserve: 2, resolve: 2, keyLookup: 2, keyPing: 1 };

/** The lanes of the enforcement pools, which never hold more connections than ENFORCEMENT_POOL_MAX. */
export function enforcementLanes(kind: "reserve" | "resolve", e: Pick<Env, "ENFORCEMENT_POOL_MAX"> = env()): number {
  return Math.min(LANES[kind], e.ENFORCEMENT_POOL_MAX);
}

export type ConnectionBound = {
  /** Held for as long as the process runs, at most. */
  held: number;
  /** held plus the short-lived ones: a cancel per lane past its deadline, a probe per host while the primary is looked for. */
  peak: number;
  parts: Record<string, number>;
};

/** The bound for a process of `hosts` database hosts (a multi-host URL's count; 1 otherwise). */
export function connectionBound(hosts: number, e: Pick<Env, "DB_POOL_MAX" | "ENFORCEMENT_POOL_MAX"> = env()): ConnectionBound {
  const lanes = enforcementLanes("reserve", e) + enforcementLanes("resolve", e) + LANES.keyLookup + LANES.keyPing;
  const parts = {
    "main pool (DB_POOL_MAX)": e.DB_POOL_MAX,
    "enforcement pool (ENFORCEMENT_POOL_MAX)": e.ENFORCEMENT_POOL_MAX,
    "reservation, settle/release, key-lookup and key-ping lanes": lanes,
    "LISTEN for key revocations": 1,
  };
  const held = Object.values(parts).reduce((a, b) => a + b, 0);
  // One cancel at a time per lane (held for at most its 500 ms grace); one discovery per URL at a
  // time, asking each host once (db/primary-picker.ts).
  const transient = { "deadline cancels (one per lane)": lanes, "primary probes (one per host)": hosts > 1 ? hosts : 0 };
  return { held, peak: held + transient["deadline cancels (one per lane)"] + transient["primary probes (one per host)"], parts: { ...parts, ...transient } };
}

/** max_connections for `processes` app processes, plus room for replication, Patroni and an operator. */
export function maxConnectionsFor(processes: number, hosts: number, e?: Pick<Env, "DB_POOL_MAX" | "ENFORCEMENT_POOL_MAX">): number {
  const RESERVED = 20;
  return processes * connectionBound(hosts, e).peak + RESERVED;
}
