import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";
import type { Metrics } from "./registry";

// Gauges read from the database at scrape time (never on the hot path): worker heartbeat ages,
// the outbox by state, and this database's connections by state.

export async function refreshDatabaseGauges(db: Db, m: Metrics): Promise<void> {
  const [heartbeats, deliveries, connections] = await Promise.all([
    db.execute(sql`select name, extract(epoch from now() - beat_at)::float8 as age from worker_heartbeats`),
    db.execute(sql`select state::text as state, count(*)::int as n from alert_deliveries group by state`),
    db.execute(sql`select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity where datname = current_database() group by 1`),
  ]);
  m.heartbeatAge.reset();
  for (const r of resultRows<{ name: string; age: number }>(heartbeats)) m.heartbeatAge.set({ worker: r.name }, Number(r.age));
  m.alertDeliveries.reset();
  for (const state of ["pending", "delivered", "failed"]) m.alertDeliveries.set({ state }, 0);
  for (const r of resultRows<{ state: string; n: number }>(deliveries)) m.alertDeliveries.set({ state: r.state }, r.n);
  m.dbConnections.reset();
  for (const r of resultRows<{ state: string; n: number }>(connections)) m.dbConnections.set({ state: r.state }, r.n);
}
