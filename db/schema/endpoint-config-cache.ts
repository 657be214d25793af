import { bigint, integer, jsonb, numeric, pgTable, text, timestamp } from "drizzle-orm/pg-core";

// What reserve_batch_arrays reads of an endpoint before it decides (its one part's price, its
// limits by position with their windows, thresholds and answer parts), as the last batch to miss
// computed it: the reading it replaces (the endpoint, its ceilings and budgets, each limit's
// window) was a fifth of a lone call's work. A row holds only while its windows do (valid_from
// <= now < valid_until) and until the endpoint's configuration changes: every change takes the
// endpoint's lock through ceilings.lock_endpoints_for_change, which deletes the row (migration
// 0045: triggers on endpoints, ceilings, budgets and budget_members, and on TRUNCATE of each). Only
// ceilings.endpoint_config (SECURITY DEFINER, computing from the tables itself) writes it; the app
// role reads it and nothing more (db/roles.ts): a row written by hand would be a limit nobody sees.
export const endpointConfigCache = pgTable("endpoint_config_cache", {
  // The endpoint's id.
  id: integer("id").primaryKey(),
  validFrom: timestamp("valid_from", { withTimezone: true }).notNull(),
  validUntil: timestamp("valid_until", { withTimezone: true }).notNull(),
  perCallMax: bigint("per_call_max", { mode: "number" }).notNull(),
  unitPrice: numeric("unit_price").notNull(),
  prices: jsonb("prices").notNull(),
  limitIds: integer("limit_ids").array().notNull(),
  limitScope: text("limit_scope").array().notNull(),
  limitMeasure: text("limit_measure").array().notNull(),
  limitValue: bigint("limit_value", { mode: "number" }).array().notNull(),
  limitStart: timestamp("limit_start", { withTimezone: true }).array().notNull(),
  limitEnd: timestamp("limit_end", { withTimezone: true }).array().notNull(),
  limitThresholds: jsonb("limit_thresholds").notNull(),
  entries: jsonb("entries").notNull(),
});
