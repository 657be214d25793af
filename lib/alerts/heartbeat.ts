import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import { workerHeartbeats } from "@/db/schema";

// Who watches the worker: every loop writes a heartbeat. A beat older than the silence limit is
// shown as silent on the dashboard and raised as an alert by whoever sees it first: another
// worker's loop, the worker itself when it starts again, or any dashboard page that reads the
// badge. The stale beat's time is in the dedupe key, so each silence alerts once.

export type WorkerLiveness = "running" | "silent";
export type WorkerHealth = { name: string; beatAt: Date; ageSeconds: number; state: WorkerLiveness; detail: string | null };

export async function writeHeartbeat(db: Db, p: { name: string; detail: string }): Promise<void> {
  await db
    .insert(workerHeartbeats)
    .values({ name: p.name, beatAt: sql`now()`, detail: p.detail })
    .onConflictDoUpdate({ target: workerHeartbeats.name, set: { beatAt: sql`now()`, detail: p.detail } });
}

/** Every worker that ever beat, newest first, with its age measured by the database clock. */
export async function readWorkerHealth(db: Db, p: { silentAfterSeconds: number }): Promise<WorkerHealth[]> {
  const rows = resultRows<{ name: string; beat_at: string | Date; age: string | number; detail: string | null }>(
    await db.execute(sql`select name, beat_at, extract(epoch from now() - beat_at) as age, detail
                         from worker_heartbeats order by beat_at desc`),
  );
  return rows.map((r) => {
    const ageSeconds = Math.max(0, Math.floor(Number(r.age)));
    return {
      name: r.name,
      beatAt: new Date(r.beat_at),
      ageSeconds,
      state: ageSeconds > p.silentAfterSeconds ? "silent" : "running",
      detail: r.detail,
    };
  });
}

/**
 * Fires a worker_silent alert for each heartbeat older than the limit, once per silence.
 * `except` leaves out the caller's own name: a loop that is running is not silent.
 */
export async function raiseSilentWorkers(db: Db, p: { silentAfterSeconds: number; except?: string }): Promise<number> {
  const [row] = resultRows<{ fired: string | number }>(
    await db.execute(sql`
      select count(*) filter (where ceilings.fire_alert('worker_silent',
        format('worker_silent:%s:%s', h.name, floor(extract(epoch from h.beat_at))::bigint), null, null, null,
        format('worker %s has been silent since %s UTC: expiry, reconcile and alert delivery may have stopped',
               h.name, to_char(h.beat_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')),
        jsonb_build_object('worker', h.name, 'lastBeat', h.beat_at, 'detail', h.detail))) as fired
      from worker_heartbeats h
      where h.beat_at < now() - make_interval(secs => ${p.silentAfterSeconds}::int)
        and h.name is distinct from ${p.except ?? null}::text
        and not exists (select 1 from alerts x
                        where x.dedupe_key = format('worker_silent:%s:%s', h.name, floor(extract(epoch from h.beat_at))::bigint))`),
  );
  return Number(row?.fired ?? 0);
}
