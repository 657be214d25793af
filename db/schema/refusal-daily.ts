import { bigint, index, integer, pgTable, text, timestamp, unique } from "drizzle-orm/pg-core";
import { endpoints } from "./endpoints";
import { refusalGate } from "./refusals";

// Refusals per UTC day, endpoint and gate: refusal_hourly summed by day, kept by
// ceilings.log_refusals in the same statement. A chart with day (or longer) bars over 90 days
// reads at most 90 rows per endpoint and gate here instead of 24 times as many hours (825,212
// hourly rows for 2 million refusals on 50 endpoints). Same keys and nulls as refusal_hourly.
export const refusalDaily = pgTable(
  "refusal_daily",
  {
    day: timestamp("day", { withTimezone: true }).notNull(),
    endpointId: integer("endpoint_id").references(() => endpoints.id, { onDelete: "cascade" }),
    endpointKey: text("endpoint_key").notNull(),
    gate: refusalGate("gate").notNull(),
    count: bigint("count", { mode: "number" }).notNull(),
  },
  (t) => [
    unique("refusal_daily_key").on(t.day, t.endpointKey, t.gate, t.endpointId).nullsNotDistinct(),
    // Index-only scans in day order, unfiltered or by endpoint (as refusal_hourly's indexes).
    index("refusal_daily_day_idx").on(t.day, t.gate, t.count),
    index("refusal_daily_endpoint_day_idx").on(t.endpointId, t.day, t.gate, t.count),
  ],
);

export type RefusalDaily = typeof refusalDaily.$inferSelect;
