import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, pgView, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { limits } from "./limits";

// One counter per limit, scope key and window, whatever the limit's kind, held and settled in the
// limit's measure: units or calls for a ceiling, micros for a budget. Rows are kept after the
// window closes: they are the spend history the charts read. scope_key is '' for a global limit,
// the billing account for a per-caller ceiling or per-account budget, and the canonical destination
// for a cooldown. Every writer (reserve_batch, resolve_charges) locks them in this key's order.
export const counters = pgTable(
  "counters",
  {
    limitId: integer("limit_id")
      .notNull()
      .references(() => limits.id, { onDelete: "cascade" }),
    scopeKey: text("scope_key").notNull(),
    windowStart: timestamp("window_start", { withTimezone: true }).notNull(),
    windowEnd: timestamp("window_end", { withTimezone: true }).notNull(),
    held: bigint("held", { mode: "number" }).notNull().default(0),
    settled: bigint("settled", { mode: "number" }).notNull().default(0),
    reservations: bigint("reservations", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.limitId, t.scopeKey, t.windowStart] }),
    index("counters_window_idx").on(t.windowStart),
    // The top accounts of a per-account limit in a window: an index-only range per window. A settle
    // changes settled, so it is not a HOT update; a reservation (held, reservations) is.
    index("counters_limit_window_settled_idx").on(t.limitId, t.windowStart, t.settled),
    check("counters_held_nonneg", sql`${t.held} >= 0`),
    check("counters_settled_nonneg", sql`${t.settled} >= 0`),
  ],
);

/** The columns of a view of one kind's counters, after the column that names its ceiling or budget. */
export function counterViewColumns() {
  return {
    limitId: integer("limit_id").notNull(),
    scopeKey: text("scope_key").notNull(),
    windowStart: timestamp("window_start", { withTimezone: true }).notNull(),
    windowEnd: timestamp("window_end", { withTimezone: true }).notNull(),
    held: bigint("held", { mode: "number" }).notNull(),
    settled: bigint("settled", { mode: "number" }).notNull(),
    reservations: bigint("reservations", { mode: "number" }).notNull(),
  };
}

// The counters of the ceilings, named by the ceiling (migration 0042's view): what the dashboard's
// readers of one ceiling's spend read. Read only; writers write counters.
export const usage = pgView("usage", { ceilingId: integer("ceiling_id").notNull(), ...counterViewColumns() }).existing();

export type Usage = typeof usage.$inferSelect;
export type Counter = typeof counters.$inferSelect;
