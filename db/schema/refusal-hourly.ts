import { sql } from "drizzle-orm";
import { bigint, index, integer, pgTable, text, timestamp, unique } from "drizzle-orm/pg-core";
import { endpoints } from "./endpoints";
import { refusalGate } from "./refusals";

// Refusals per UTC hour, endpoint and gate, kept by ceilings.log_refusals in the same transaction
// as the refusal rows: the per-gate chart over weeks reads a few hundred thousand of these instead
// of millions of refusals. Every refusal counts in the hour of its row's `at` (a folded row's
// first time; a fold never crosses an hour, since folding buckets are 10 s).
export const refusalHourly = pgTable(
  "refusal_hourly",
  {
    hour: timestamp("hour", { withTimezone: true }).notNull(),
    // Null exactly where the refusal rows' endpoint_id is null (unavailable refusals logged by the
    // app without a database answer), so an endpoint filter counts what the raw log counts.
    endpointId: integer("endpoint_id").references(() => endpoints.id, { onDelete: "cascade" }),
    endpointKey: text("endpoint_key").notNull(),
    gate: refusalGate("gate").notNull(),
    count: bigint("count", { mode: "number" }).notNull(),
  },
  (t) => [
    // The upsert's conflict target. endpoint_id is part of it (nulls not distinct) rather than a
    // primary key column, because a key can have rows with and without an id in the same hour.
    unique("refusal_hourly_key").on(t.hour, t.endpointKey, t.gate, t.endpointId).nullsNotDistinct(),
    // gate and count ride along so the chart is an index-only scan in hour order, unfiltered or by
    // endpoint. Indexing count makes the upsert's updates non-HOT; only the current hour's few
    // rows are updated, so that costs little.
    index("refusal_hourly_hour_idx").on(t.hour, t.gate, t.count),
    index("refusal_hourly_endpoint_hour_idx").on(t.endpointId, t.hour, t.gate, t.count),
    // Readiness' week of unavailable refusals by endpoint key (a refusal logged while the database
    // could not answer has no endpoint id): a few rows an hour, read without the rest of the gates'
    // rows from the heap (56 ms at 2 M refusals without it).
    index("refusal_hourly_unavailable_idx")
      .on(t.hour, t.endpointKey, t.count)
      .where(sql`${t.gate} = 'unavailable'`),
  ],
);

export type RefusalHourly = typeof refusalHourly.$inferSelect;
