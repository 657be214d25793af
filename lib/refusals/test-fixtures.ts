import { sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { refusals } from "@/db/schema";
import type { Gate } from "@/lib/vocabulary";

// Hand-made refusal rows for integration tests: explicit times, so every filter's answer is known.

export type RefusalSpec = {
  /** Null as for unavailable refusals the app logs without a database answer. */
  endpointId: number | null;
  endpointKey: string;
  at: Date;
  gate?: Gate;
  caller?: string;
  destination?: string;
  count?: number;
  amount?: number;
  remaining?: number | null;
  ceilingId?: number | null;
  requestId?: string;
};

let serial = 0;

export async function insertRefusals(db: Db, specs: RefusalSpec[]): Promise<number[]> {
  if (specs.length === 0) return [];
  const rows = await db
    .insert(refusals)
    .values(
      specs.map((s) => {
        serial += 1;
        return {
          at: s.at,
          lastAt: s.at,
          // Unique per row so the dedupe index never folds two hand-made rows.
          bucket: new Date(s.at.getTime() + serial),
          endpointId: s.endpointId,
          endpointKey: s.endpointKey,
          ceilingId: s.ceilingId ?? null,
          gate: s.gate ?? "ceiling",
          caller: s.caller ?? "",
          destination: s.destination ?? "",
          amount: s.amount ?? 1,
          remaining: s.remaining ?? null,
          count: s.count ?? 1,
          requestId: s.requestId ?? `req_${serial}`,
          detail: "test refusal",
        };
      }),
    )
    .returning({ id: refusals.id });
  const ids = rows.map((r) => r.id);
  // What ceilings.log_refusals does for the rows it writes: count them into the rollups.
  const ofRows = sql`from refusals where id = any(${`{${ids.join(",")}}`}::bigint[]) group by 1, 2, 3, 4`;
  await db.execute(sql`
    insert into refusal_hourly as h (hour, endpoint_id, endpoint_key, gate, count)
    select date_trunc('hour', at, 'UTC'), endpoint_id, endpoint_key, gate, sum(count) ${ofRows}
    on conflict (hour, endpoint_key, gate, endpoint_id) do update set count = h.count + excluded.count`);
  await db.execute(sql`
    insert into refusal_daily as d (day, endpoint_id, endpoint_key, gate, count)
    select date_trunc('day', at, 'UTC'), endpoint_id, endpoint_key, gate, sum(count) ${ofRows}
    on conflict (day, endpoint_key, gate, endpoint_id) do update set count = d.count + excluded.count`);
  return ids;
}

export const minutesAgo = (base: Date, m: number) => new Date(base.getTime() - m * 60_000);
