import { sql } from "drizzle-orm";
import { index, integer, pgEnum, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { alertDestinations } from "./alert-destinations";
import { alerts } from "./alerts";

export const deliveryState = pgEnum("delivery_state", ["pending", "delivered", "failed"]);

// The outbox: written in the transaction that fires the alert, drained by the worker.
export const alertDeliveries = pgTable(
  "alert_deliveries",
  {
    alertId: integer("alert_id")
      .notNull()
      .references(() => alerts.id, { onDelete: "cascade" }),
    destinationId: integer("destination_id")
      .notNull()
      .references(() => alertDestinations.id, { onDelete: "cascade" }),
    state: deliveryState("state").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    lastError: text("last_error"),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.alertId, t.destinationId] }),
    index("alert_deliveries_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`state = 'pending'`),
  ],
);

export type AlertDelivery = typeof alertDeliveries.$inferSelect;
