import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { fireAlert } from "./fire";
import type { CeilingScope } from "@/lib/vocabulary";

// The reconcile job: every counter of an open window must agree with the reservations that
// charged it. reserve_batch, settle, release and expiry each change a counter and its
// reservations in one transaction, so any disagreement is a bug or a hand edit, never a race; the
// check runs as one statement, so it reads one snapshot.
//
// What is compared, and why:
//   held    always: nothing but a held reservation may hold units, so counter.held must equal
//           the sum of the charges of held reservations on that counter.
//   settled only when the counter's grant count equals the number of reservations that charged
//           it. Counters can carry spend without reservation rows (imported or seeded history,
//           reservations pruned later); there settled cannot be recomputed, and only held is
//           checked. A settled or expired reservation keeps its charge (settle keeps the actual
//           units on unit counters and the call on call counters); a released one keeps nothing.

export type Drift = {
  endpointId: number;
  endpointKey: string;
  ceilingId: number;
  scope: CeilingScope;
  scopeKey: string;
  windowStart: Date;
  windowEnd: Date;
  held: number;
  heldByReservations: number;
  settled: number;
  /** Null when settled was not compared (the counter has grants without reservation rows). */
  settledByReservations: number | null;
  grants: number;
  reservations: number;
};

type Row = {
  endpoint_id: number;
  endpoint_key: string;
  ceiling_id: number;
  scope: Drift["scope"];
  scope_key: string;
  window_start: string | Date;
  window_end: string | Date;
  held: string | number;
  r_held: string | number;
  settled: string | number;
  r_settled: string | number;
  grants: string | number;
  r_grants: string | number;
};

/** Counters of open windows that disagree with their reservations. */
export async function findDrift(db: Db): Promise<Drift[]> {
  const rows = resultRows<Row>(
    await db.execute(sql`
      with open_counters as (
        select u.ceiling_id, u.scope_key, u.window_start, u.window_end, u.held, u.settled, u.reservations as grants,
               c.endpoint_id, c.scope
        from usage u join ceilings c on c.id = u.ceiling_id
        where u.window_end > now()
      ), since as (
        select endpoint_id, min(window_start) as since from open_counters group by endpoint_id
      ), charged as (
        -- A reservation is created inside every window it charges, so older ones cannot matter.
        select c.id as ceiling_id, ch.scope_key, ch.window_start,
               sum(case when r.state = 'held' then ch.amount else 0 end) as held,
               sum(case r.state
                     when 'expired' then ch.amount
                     when 'settled' then case when ch.measure = 'u' then r.settled_amount else ch.amount end
                     else 0 end) as settled,
               count(*) as grants
        from reservations r
        join since s on s.endpoint_id = r.endpoint_id and r.created_at >= s.since
        cross join lateral unnest(r.charges) ch
        join ceilings c on c.limit_id = ch.limit_id
        group by 1, 2, 3
      )
      select o.endpoint_id, e.key as endpoint_key, o.ceiling_id, o.scope, o.scope_key, o.window_start, o.window_end,
             o.held, coalesce(ch.held, 0) as r_held, o.settled, coalesce(ch.settled, 0) as r_settled,
             o.grants, coalesce(ch.grants, 0) as r_grants
      from open_counters o
      join endpoints e on e.id = o.endpoint_id
      left join charged ch
        on ch.ceiling_id = o.ceiling_id and ch.scope_key = o.scope_key and ch.window_start = o.window_start
      where o.held <> coalesce(ch.held, 0)
         or (o.grants = coalesce(ch.grants, 0) and o.settled <> coalesce(ch.settled, 0))
      order by o.ceiling_id, o.scope_key, o.window_start`),
  );
  return rows.map((r) => {
    const grants = Number(r.grants);
    const reservations = Number(r.r_grants);
    return {
      endpointId: r.endpoint_id,
      endpointKey: r.endpoint_key,
      ceilingId: r.ceiling_id,
      scope: r.scope,
      scopeKey: r.scope_key,
      windowStart: new Date(r.window_start),
      windowEnd: new Date(r.window_end),
      held: Number(r.held),
      heldByReservations: Number(r.r_held),
      settled: Number(r.settled),
      settledByReservations: grants === reservations ? Number(r.r_settled) : null,
      grants,
      reservations,
    };
  });
}

const scopeWords: Record<Drift["scope"], string> = { global: "", caller: " for one account", destination: " for one destination" };

export function driftMessage(d: Drift): string {
  const parts = [`held ${d.held}, reservations hold ${d.heldByReservations}`];
  if (d.settledByReservations !== null && d.settledByReservations !== d.settled) {
    parts.push(`settled ${d.settled}, reservations settled ${d.settledByReservations}`);
  }
  return `${d.endpointKey}: the counter of ceiling ${d.ceilingId}${scopeWords[d.scope]} disagrees with its reservations (${parts.join("; ")})`;
}

/** Runs the check and fires one drift alert per counter and window. Returns the drifted counters. */
export async function reconcileCounters(db: Db): Promise<Drift[]> {
  const drift = await findDrift(db);
  for (const d of drift) {
    await fireAlert(db, {
      kind: "drift",
      dedupeKey: `drift:${d.ceilingId}:${d.scopeKey}:${Math.floor(d.windowStart.getTime() / 1000)}`,
      endpointId: d.endpointId,
      ceilingId: d.ceilingId,
      windowStart: d.windowStart,
      message: driftMessage(d),
      details: {
        scopeKey: d.scopeKey,
        windowEnd: d.windowEnd.toISOString(),
        held: d.held,
        heldByReservations: d.heldByReservations,
        settled: d.settled,
        settledByReservations: d.settledByReservations,
        grants: d.grants,
        reservations: d.reservations,
      },
    });
  }
  return drift;
}
