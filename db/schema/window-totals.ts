import { sql } from "drizzle-orm";
import { bigint, check, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

// Each limit's counters summed per window (lib/spend/window-totals.ts), kept by the worker so the
// overview, the sparklines and a budget's history do not sum a hundred thousand per-account
// counters on every load. `kind` says whose counters: a ceiling's (usage) or a budget's
// (budget_usage, in the budget's scope). Closed windows are counted once they close and recounted
// for three days (a late settle still moves them); an open window is counted only when it holds
// many counters, every few seconds, and read only while fresh: small ones are read live.
export const windowTotals = pgTable(
  "window_totals",
  {
    kind: text("kind", { enum: ["ceiling", "budget"] }).notNull(),
    limitId: integer("limit_id").notNull(),
    windowStart: timestamp("window_start", { withTimezone: true }).notNull(),
    windowEnd: timestamp("window_end", { withTimezone: true }).notNull(),
    /** Counter rows in the window (in the budget's scope, for a budget). */
    counters: bigint("counters", { mode: "number" }).notNull(),
    /** Of them, those of an account (a scope key other than ''). */
    accounts: bigint("accounts", { mode: "number" }).notNull(),
    held: bigint("held", { mode: "number" }).notNull(),
    settled: bigint("settled", { mode: "number" }).notNull(),
    /** The largest held + settled of one counter. */
    busiest: bigint("busiest", { mode: "number" }).notNull(),
    computedAt: timestamp("computed_at", { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.limitId, t.windowStart] }), check("window_totals_kind", sql`${t.kind} in ('ceiling', 'budget')`)],
);

// How far the closed windows of each kind are counted: every window that ended at or before
// closed_through has its row (readers take those from window_totals and the rest live).
export const windowTotalsState = pgTable("window_totals_state", {
  kind: text("kind", { enum: ["ceiling", "budget"] }).primaryKey(),
  closedThrough: timestamp("closed_through", { withTimezone: true }).notNull(),
});

export type WindowTotals = typeof windowTotals.$inferSelect;
