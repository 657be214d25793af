import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgEnum, pgTable, pgView, primaryKey, smallint, text, timestamp } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";
import { limits, nextLimitId } from "./limits";
import { counterViewColumns } from "./usage";
import { ceilingWindow } from "./ceilings";
import { endpoints } from "./endpoints";
import { BUDGET_SCOPES, ENDPOINT_KEY_PATTERN } from "../../lib/vocabulary";

export const budgetScope = pgEnum("budget_scope", BUDGET_SCOPES);

// A hard limit in money (whole micros of `currency`) over several member endpoints: every
// reservation on a member charges its worst case in money here, in the same atomic step as the
// member's ceilings. Bounds, default, kill and version work as a ceiling's do.
export const budgets = pgTable(
  "budgets",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    // Its row in limits (what both kinds share); the insert trigger makes it.
    limitId: integer("limit_id")
      .notNull()
      .unique()
      .references(() => limits.id)
      .default(nextLimitId),
    key: text("key").notNull().unique(),
    name: text("name").notNull(),
    currency: text("currency").notNull().default("USD"),
    scope: budgetScope("scope").notNull(),
    // utc_day or billing_month (from billing_day); never first_hit.
    window: ceilingWindow("window").notNull(),
    billingDay: smallint("billing_day").notNull().default(1),
    value: bigint("value", { mode: "number" }).notNull(),
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
    // Archived: charges nothing and refuses nothing; its history stays.
    archivedAt: timestamp("archived_at", { withTimezone: true }),
    archivedBy: text("archived_by"),
    version: integer("version").notNull().default(1),
    ...timestamps,
  },
  (t) => [
    check("budgets_key_format", sql`${t.key} ~ ${sql.raw(`'${ENDPOINT_KEY_PATTERN.source}'`)}`),
    check("budgets_window", sql`${t.window} in ('utc_day', 'billing_month')`),
    check("budgets_billing_day_range", sql`${t.billingDay} between 1 and 28`),
    check("budgets_value_nonneg", sql`${t.value} >= 0`),
    check("budgets_bounds_ordered", sql`0 <= ${t.minValue} and ${t.minValue} <= ${t.maxValue}`),
    check("budgets_value_in_bounds", sql`${t.value} = 0 or ${t.value} between ${t.minValue} and ${t.maxValue}`),
    check("budgets_default_in_bounds", sql`${t.defaultValue} between ${t.minValue} and ${t.maxValue}`),
  ],
);

export type Budget = typeof budgets.$inferSelect;
export type NewBudget = typeof budgets.$inferInsert;

// The explicit list of endpoints a budget covers (no key prefixes: a new endpoint never joins a
// budget without someone saying so, so a budget's worst case only changes when it is edited).
export const budgetMembers = pgTable(
  "budget_members",
  {
    budgetId: integer("budget_id")
      .notNull()
      .references(() => budgets.id, { onDelete: "cascade" }),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => endpoints.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.budgetId, t.endpointId] }), index("budget_members_endpoint_idx").on(t.endpointId)],
);

export type BudgetMember = typeof budgetMembers.$inferSelect;

// The counters of the budgets, named by the budget (migration 0042's view), in micros. Read only;
// writers write counters.
export const budgetUsage = pgView("budget_usage", { budgetId: integer("budget_id").notNull(), ...counterViewColumns() }).existing();

export type BudgetUsage = typeof budgetUsage.$inferSelect;
