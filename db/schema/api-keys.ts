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
    // What the key may do (lib/api-keys/scopes.ts): reserve on its endpoints, or read and move
    // accounts with no endpoint. The default is the narrowest, for rows inserted without scopes.
    scopes: text("scopes")
      .array()
      .$type<("reserve" | "accounts:read" | "accounts:write")[]>()
      .notNull()
      .default(sql`'{reserve}'::text[]`),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (t) => [
    check("api_keys_account_or_trusted", sql`${t.trusted} or ${t.account} is not null`),
    check("api_keys_scopes_known", sql`cardinality(${t.scopes}) >= 1 and ${t.scopes} <@ array['reserve', 'accounts:read', 'accounts:write']::text[]`),
    // A key bound to endpoints reserves on them and does nothing else; a key for accounts has none.
    check(
      "api_keys_scopes_endpoints",
      sql`('reserve' = any(${t.scopes})) = (cardinality(${t.endpointKeys}) > 0) and (cardinality(${t.endpointKeys}) = 0 or ${t.scopes} = array['reserve']::text[])`,
    ),
    check("api_keys_scopes_write_trusted", sql`${t.trusted} or not ('accounts:write' = any(${t.scopes}))`),
  ],
);

export type ApiKey = typeof apiKeys.$inferSelect;
