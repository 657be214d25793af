import { sql } from "drizzle-orm";
import { bigint, boolean, check, integer, pgTable, smallint, text, timestamp } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";
import { ENDPOINT_KEY_PATTERN } from "../../lib/vocabulary";

export const endpoints = pgTable(
  "endpoints",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    key: text("key").notNull().unique(),
    name: text("name").notNull(),
    unit: text("unit").notNull(),
    // Price of one unit in millionths of the currency, so LLM tokens and SMS fit in integers.
    unitPriceMicros: bigint("unit_price_micros", { mode: "number" }).notNull().default(0),
    currency: text("currency").notNull().default("USD"),
    perCallMax: bigint("per_call_max", { mode: "number" }).notNull(),
    planAllowance: bigint("plan_allowance", { mode: "number" }),
    billingDay: smallint("billing_day").notNull().default(1),
    throttlePerMinute: integer("throttle_per_minute"),
    throttleFailOpen: boolean("throttle_fail_open").notNull().default(false),
    // Archived: every reserve answers endpoint_archived and nothing is charged; history stays.
    archivedAt: timestamp("archived_at", { withTimezone: true }),
    archivedBy: text("archived_by"),
    // Bumped by every catalog edit so two admins saving the same endpoint get a conflict.
    version: integer("version").notNull().default(1),
    ...timestamps,
  },
  (t) => [
    check("endpoints_key_format", sql`${t.key} ~ ${sql.raw(`'${ENDPOINT_KEY_PATTERN.source}'`)}`),
    check("endpoints_per_call_max_positive", sql`${t.perCallMax} > 0`),
    check("endpoints_billing_day_range", sql`${t.billingDay} between 1 and 28`),
    check("endpoints_plan_allowance_nonneg", sql`${t.planAllowance} is null or ${t.planAllowance} >= 0`),
    check("endpoints_unit_price_nonneg", sql`${t.unitPriceMicros} >= 0`),
  ],
);

export type Endpoint = typeof endpoints.$inferSelect;
export type NewEndpoint = typeof endpoints.$inferInsert;
