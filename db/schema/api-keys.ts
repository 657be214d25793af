import { sql } from "drizzle-orm";
import { boolean, check, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

// Only a SHA-256 of the secret is stored; the secret is shown once at creation.
export const apiKeys = pgTable(
  "api_keys",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull().unique(),
    // The billing account the key spends for; null only for a trusted service that names callers.
    account: text("account"),
    trusted: boolean("trusted").notNull().default(false),
    endpointKeys: text("endpoint_keys").array().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (t) => [check("api_keys_account_or_trusted", sql`${t.trusted} or ${t.account} is not null`)],
);

export type ApiKey = typeof apiKeys.$inferSelect;
