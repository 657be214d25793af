import { sql } from "drizzle-orm";
import { bigint, boolean, check, integer, jsonb, pgTable, smallint, text, timestamp } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";
import { ENDPOINT_KEY_PATTERN, MAX_PARTS, type EndpointPart } from "../../lib/vocabulary";

export const endpoints = pgTable(
  "endpoints",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    key: text("key").notNull().unique(),
    name: text("name").notNull(),
    unit: text("unit").notNull(),
    // The priced parts of a call (one, or input and output tokens, ...), each with the price of one
    // unit in millionths of a micro (10^-12 of the currency), so $2.50 per million tokens is exact:
    // 2,500,000. A reservation's money is the sum over parts, rounded up once to a whole micro.
    parts: jsonb("parts")
      .$type<EndpointPart[]>()
      .notNull()
      .default(sql`'[{"name":"units","pricePico":0}]'::jsonb`),
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
    check("endpoints_parts_list", sql`jsonb_typeof(${t.parts}) = 'array' and jsonb_array_length(${t.parts}) between 1 and ${sql.raw(String(MAX_PARTS))}`),
  ],
);

export type Endpoint = typeof endpoints.$inferSelect;
export type NewEndpoint = typeof endpoints.$inferInsert;
