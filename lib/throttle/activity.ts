import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

export type ThrottleCaller = {
  caller: string;
  /** Every attempt that reached the throttle in the period, refused or not. */
  attempts: number;
  /** Attempts the throttle turned away in the period (from the refusal log). */
  refused: number;
  /** The gate's own estimate of this caller's rate now: this minute + the last, weighted by overlap. */
  estimatePerMinute: number;
  lastSeen: Date;
};

export type ThrottleActivity = {
  endpointId: number;
  /** Requests a minute per caller, or null when the endpoint has no throttle. */
  perMinute: number | null;
  failOpen: boolean;
  minutes: number;
  totals: { attempts: number; refused: number; callers: number };
  /** Busiest callers first. */
  callers: ThrottleCaller[];
};

export type ListThrottleActivityOptions = {
  /** How far back to look, in whole minutes (1 to 60). */
  minutes?: number;
  /** How many callers to list (1 to 100). */
  limit?: number;
};

type CallerRow = { caller: string; attempts: string | number; refused: string | number; estimate: string | number; last_seen: string | Date };
type TotalsRow = { attempts: string | number; callers: string | number; refused: string | number };

/**
 * What the soft throttle of one endpoint has seen lately: the busiest callers by attempts and how
 * many of their attempts it refused. Read from the throttle's own counters and the refusal log, with
 * the database's clock, so the estimate matches the one the gate computes.
 */
export async function listThrottleActivity(db: Db, endpointId: number, options: ListThrottleActivityOptions = {}): Promise<ThrottleActivity | null> {
  const minutes = clampWhole(options.minutes ?? 10, 1, 60);
  const limit = clampWhole(options.limit ?? 10, 1, 100);
  const [endpoint] = resultRows<{ throttle_per_minute: number | null; throttle_fail_open: boolean }>(
    await db.execute(sql`select throttle_per_minute, throttle_fail_open from endpoints where id = ${endpointId}`),
  );
  if (!endpoint) return null;

  const since = sql`date_trunc('minute', now()) - make_interval(mins => ${minutes - 1})`;
  // A refusal row folds one 10-second bucket (log_refusals): its first time is at most 10 s before
  // its last, so this bound changes no answer and lets refusals_endpoint_at_idx find the rows
  // (no index has last_at: the filter alone read every refusal of the endpoint).
  const refusedSince = sql`at > ${since} - interval '10 seconds'`;
  const callers = resultRows<CallerRow>(
    await db.execute(sql`
      with attempts as (
        select caller,
               sum(attempts) as attempts,
               max(minute) as last_seen,
               coalesce(sum(attempts) filter (where minute = date_trunc('minute', now())), 0)
                 + coalesce(sum(attempts) filter (where minute = date_trunc('minute', now()) - interval '1 minute'), 0)
                   * (60 - extract(second from now())) / 60 as estimate
        from throttle_counters
        where endpoint_id = ${endpointId} and minute >= ${since}
        group by caller
      ),
      refused as (
        select caller, sum(count) as refused
        from refusals
        where endpoint_id = ${endpointId} and gate = 'throttle' and last_at >= ${since} and ${refusedSince}
        group by caller
      )
      select a.caller, a.attempts, coalesce(r.refused, 0) as refused, floor(a.estimate) as estimate, a.last_seen
      from attempts a left join refused r on r.caller = a.caller
      order by a.attempts desc, a.caller
      limit ${limit}`),
  );
  const [totals] = resultRows<TotalsRow>(
    await db.execute(sql`
      select (select coalesce(sum(attempts), 0) from throttle_counters where endpoint_id = ${endpointId} and minute >= ${since}) as attempts,
             (select count(distinct caller) from throttle_counters where endpoint_id = ${endpointId} and minute >= ${since}) as callers,
             (select coalesce(sum(count), 0) from refusals where endpoint_id = ${endpointId} and gate = 'throttle' and last_at >= ${since} and ${refusedSince}) as refused`),
  );

  return {
    endpointId,
    perMinute: endpoint.throttle_per_minute,
    failOpen: endpoint.throttle_fail_open,
    minutes,
    totals: { attempts: Number(totals?.attempts ?? 0), refused: Number(totals?.refused ?? 0), callers: Number(totals?.callers ?? 0) },
    callers: callers.map((r) => ({
      caller: r.caller,
      attempts: Number(r.attempts),
      refused: Number(r.refused),
      estimatePerMinute: Number(r.estimate),
      lastSeen: r.last_seen instanceof Date ? r.last_seen : new Date(r.last_seen),
    })),
  };
}

function clampWhole(value: number, min: number, max: number): number {
  return Number.isInteger(value) ? Math.min(Math.max(value, min), max) : min;
}
