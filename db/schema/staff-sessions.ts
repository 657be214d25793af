import { index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { staff } from "./staff";

// One row per sign-in. The session cookie carries only the id; ending the row (sign-out) ends the
// session on the next request, and the two timestamps bound it by an idle and an absolute lifetime.
export const staffSessions = pgTable(
  "staff_sessions",
  {
    id: text("id").primaryKey(),
    staffId: integer("staff_id")
      .notNull()
      .references(() => staff.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull().defaultNow(),
    endedAt: timestamp("ended_at", { withTimezone: true }),
  },
  (t) => [index("staff_sessions_staff_idx").on(t.staffId)],
);

export type StaffSession = typeof staffSessions.$inferSelect;
