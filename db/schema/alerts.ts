import { index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

// dedupe_key makes each alert fire once, e.g. "threshold:<ceiling>:<window>:<percent>".
export const alerts = pgTable(
  "alerts",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    kind: text("kind").notNull(),
    dedupeKey: text("dedupe_key").notNull().unique(),
    endpointId: integer("endpoint_id"),
    ceilingId: integer("ceiling_id"),
    budgetId: integer("budget_id"),
    windowStart: timestamp("window_start", { withTimezone: true }),
    message: text("message").notNull(),
    details: jsonb("details").$type<Record<string, unknown>>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    acknowledgedAt: timestamp("acknowledged_at", { withTimezone: true }),
    acknowledgedBy: text("acknowledged_by"),
  },
  (t) => [index("alerts_created_idx").on(t.createdAt.desc())],
);

export type Alert = typeof alerts.$inferSelect;
