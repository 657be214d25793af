import { bigint, index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { ceilings } from "./ceilings";

// Each account's settled units on a per-caller ceiling, summed over the windows of the last 30
// days that can no longer change (lib/counters/caller-totals.ts): what ranks the accounts that
// spent most over 30 days without summing every account's counter of every window on each read.
// Kept by the worker, rebuilt once a day per ceiling. A window is in once it is over and nothing
// reserved in it is held; a late overrun (ceilings.settle on an expired or released reservation)
// deletes its ceiling's caller_totals_state row, which makes readers skip the rows until the next
// build.
export const callerTotals = pgTable(
  "caller_totals",
  {
    ceilingId: integer("ceiling_id")
      .notNull()
      .references(() => ceilings.id, { onDelete: "cascade" }),
    scopeKey: text("scope_key").notNull(),
    settled: bigint("settled", { mode: "number" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.ceilingId, t.scopeKey] }),
    // Accounts in the order a ranking reads them: the first k are one short index range.
    index("caller_totals_rank_idx").on(t.ceilingId, t.settled.desc(), t.scopeKey),
  ],
);

// Which windows a ceiling's caller_totals hold: those starting in [from_start, through_start).
export const callerTotalsState = pgTable("caller_totals_state", {
  ceilingId: integer("ceiling_id")
    .primaryKey()
    .references(() => ceilings.id, { onDelete: "cascade" }),
  fromStart: timestamp("from_start", { withTimezone: true }).notNull(),
  throughStart: timestamp("through_start", { withTimezone: true }).notNull(),
  builtAt: timestamp("built_at", { withTimezone: true }).notNull().defaultNow(),
});
