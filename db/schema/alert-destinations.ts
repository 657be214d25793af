import { sql } from "drizzle-orm";
import { boolean, check, integer, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const alertDestinationKind = pgEnum("alert_destination_kind", ["slack", "webhook", "email"]);

export const smtpTlsMode = pgEnum("smtp_tls_mode", ["tls", "starttls", "none"]);

export const alertDestinations = pgTable(
  "alert_destinations",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    name: text("name").notNull(),
    kind: alertDestinationKind("kind").notNull(),
    // A URL for slack and webhook; for email the recipients, comma-separated.
    target: text("target").notNull(),
    // HMAC key for generic webhooks; signs the body, never sent.
    signingSecret: text("signing_secret"),
    enabled: boolean("enabled").notNull().default(true),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    // E-mail (SMTP) only. The password is never stored: smtpPasswordRef names the environment
    // variable of the worker that holds it (CEILINGS_SECRET_...).
    smtpHost: text("smtp_host"),
    smtpPort: integer("smtp_port"),
    smtpTls: smtpTlsMode("smtp_tls"),
    smtpUsername: text("smtp_username"),
    smtpPasswordRef: text("smtp_password_ref"),
    emailFrom: text("email_from"),
  },
  (t) => [
    check(
      "alert_destinations_email_smtp",
      sql`${t.kind} <> 'email' or (${t.smtpHost} is not null and ${t.smtpPort} is not null and ${t.smtpTls} is not null and ${t.emailFrom} is not null)`,
    ),
  ],
);

export type AlertDestination = typeof alertDestinations.$inferSelect;
