import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { ceilings } from "./ceilings";

// One counter per ceiling, scope key and window. Rows are kept after the window closes: they are
// the spend history the charts read. scope_key is '' for global ceilings, the billing account for
// per-caller ceilings and the canonical destination for cooldowns.
export const usage = pgTable(
  "usage",
  {
    ceilingId: integer("ceiling_id")
      .notNull()
      .references(() => ceilings.id, { onDelete: "cascade" }),
    scopeKey: text("scope_key").notNull(),
    windowStart: timestamp("window_start", { withTimezone: true }).notNull(),
    windowEnd: timestamp("window_end", { withTimezone: true }).notNull(),
    held: bigint("held", { mode: "number" }).notNull().default(0),
    settled: bigint("settled", { mode: "number" }).notNull().default(0),
    reservations: bigint("reservations", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.ceilingId, t.scopeKey, t.windowStart] }),
    index("usage_window_idx").on(t.windowStart),
    // The top accounts of a per-caller ceiling in a window: an index-only range per window, as
    // budget_usage_window_idx is for budgets. A settle changes settled, so it is not a HOT update.
    index("usage_ceiling_window_settled_idx").on(t.ceilingId, t.windowStart, t.settled),
    check("usage_held_nonneg", sql`${t.held} >= 0`),
    check("usage_settled_nonneg", sql`${t.settled} >= 0`),
  ],
);

export type Usage = typeof usage.$inferSelect;
