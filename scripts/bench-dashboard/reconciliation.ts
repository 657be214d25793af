import { sql } from "drizzle-orm";
import { resultRows, type Db } from "@/db/client";
import { formatCount } from "@/lib/format";
import { readinessOf } from "@/lib/reconciliation/readiness";
import { endpointReconciliation, reconciliationGrid } from "@/lib/reconciliation/read";

// Reconciliation's reads at the size db:fill makes (50 endpoints, --reservations N over --days D):
// the readiness of every endpoint (the overview's column, on every overview load), the 7-day grid of
// the Reconciliation page, and the busiest endpoint's 30- and 90-day series (its page). Targets: the
// readiness 150 ms (it shares the overview's 300 ms), each page's read 150 ms.
export async function reconciliationCases(db: Db, now: Date): Promise<{ label: string; target: number; run: () => Promise<unknown> }[]> {
  const [busiest] = resultRows<{ id: number; endpoints: string; week: string }>(
    await db.execute(sql`
      select (select endpoint_id from reservations where created_at >= ${now.toISOString()}::timestamptz - interval '7 days'
              group by endpoint_id order by count(*) desc limit 1) as id,
             (select count(*) from endpoints where archived_at is null)::text as endpoints,
             (select count(*) from reservations where created_at >= ${now.toISOString()}::timestamptz - interval '7 days')::text as week`),
  );
  if (!busiest?.id) return [];
  const sizes = `${busiest.endpoints} endpoints, ${formatCount(Number(busiest.week))} reservations in 7 days`;
  return [
    { label: `readiness: every endpoint (${sizes})`, target: 150, run: () => readinessOf(db, { now }) },
    { label: `reconciliation: the 7-day grid (${sizes})`, target: 150, run: () => reconciliationGrid(db, { now }) },
    { label: `reconciliation: the busiest endpoint's 30 and 90 days`, target: 150, run: () => endpointReconciliation(db, { endpointId: busiest.id, now }) },
  ];
}
