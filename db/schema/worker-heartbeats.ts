import { pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const workerHeartbeats = pgTable("worker_heartbeats", {
  name: text("name").primaryKey(),
  beatAt: timestamp("beat_at", { withTimezone: true }).notNull().defaultNow(),
  detail: text("detail"),
});
