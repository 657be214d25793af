import { boolean, integer, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const alertDestinationKind = pgEnum("alert_destination_kind", ["slack", "webhook", "email"]);

export const alertDestinations = pgTable("alert_destinations", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  name: text("name").notNull(),
  kind: alertDestinationKind("kind").notNull(),
  // A URL for slack and webhook, an address for email.
  target: text("target").notNull(),
  // HMAC key for generic webhooks; signs the body, never sent.
  signingSecret: text("signing_secret"),
  enabled: boolean("enabled").notNull().default(true),
  createdBy: text("created_by").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export type AlertDestination = typeof alertDestinations.$inferSelect;
