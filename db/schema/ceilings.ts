import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgEnum, pgTable, smallint, text, timestamp } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";
import { limits, nextLimitId } from "./limits";
import { endpoints } from "./endpoints";
import { CEILING_METRICS, CEILING_SCOPES, CEILING_WINDOWS, DESTINATION_KINDS } from "../../lib/vocabulary";

export const ceilingMetric = pgEnum("ceiling_metric", CEILING_METRICS);
export const ceilingScope = pgEnum("ceiling_scope", CEILING_SCOPES);
export const ceilingWindow = pgEnum("ceiling_window", CEILING_WINDOWS);
// Null in a row: recognised from the value itself (an address, a number, anything else).
export const destinationKind = pgEnum("destination_kind", DESTINATION_KINDS);

export const ceilings = pgTable(
  "ceilings",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    // Its row in limits (what both kinds share); the insert trigger makes it.
    limitId: integer("limit_id")
      .notNull()
      .unique()
      .references(() => limits.id)
      .default(nextLimitId),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
    metric: ceilingMetric("metric").notNull(),
    scope: ceilingScope("scope").notNull(),
    window: ceilingWindow("window").notNull(),
    // Length of a first_hit window (a cooldown); null for calendar windows.
    windowSeconds: integer("window_seconds"),
    destinationKind: destinationKind("destination_kind"),
    value: bigint("value", { mode: "number" }).notNull(),
    // Set while killed: the value a restore puts back.
    valueBeforeKill: bigint("value_before_kill", { mode: "number" }),
    minValue: bigint("min_value", { mode: "number" }).notNull().default(0),
    maxValue: bigint("max_value", { mode: "number" }).notNull(),
    defaultValue: bigint("default_value", { mode: "number" }).notNull(),
    alertThresholds: smallint("alert_thresholds")
      .array()
      .notNull()
      .default(sql`'{50,80,100}'::smallint[]`),
    killedAt: timestamp("killed_at", { withTimezone: true }),
    killedBy: text("killed_by"),
    // Bumped by every edit so two staff saving the same ceiling get a conflict, not an overwrite.
    version: integer("version").notNull().default(1),
    ...timestamps,
  },
  (t) => [
    index("ceilings_endpoint_idx").on(t.endpointId),
    check("ceilings_value_nonneg", sql`${t.value} >= 0`),
    check("ceilings_bounds_ordered", sql`0 <= ${t.minValue} and ${t.minValue} <= ${t.maxValue}`),
    check("ceilings_value_in_bounds", sql`${t.value} = 0 or ${t.value} between ${t.minValue} and ${t.maxValue}`),
    check("ceilings_default_in_bounds", sql`${t.defaultValue} between ${t.minValue} and ${t.maxValue}`),
    check("ceilings_window_seconds", sql`(${t.window} = 'first_hit') = (${t.windowSeconds} is not null and ${t.windowSeconds} > 0)`),
    check("ceilings_cooldown_scope", sql`${t.window} <> 'first_hit' or ${t.scope} = 'destination'`),
    check("ceilings_destination_kind_scope", sql`${t.destinationKind} is null or ${t.scope} = 'destination'`),
  ],
);

export type Ceiling = typeof ceilings.$inferSelect;
export type NewCeiling = typeof ceilings.$inferInsert;
