import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, pgTable, primaryKey, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";
import { limits } from "./limits";
import { ENDPOINT_KEY_PATTERN } from "../../lib/vocabulary";

// A customer tier (free, pro, enterprise): its own value on any per-caller ceiling and any
// per-account budget. What binds an account: its override, else its plan's value, else the
// ceiling's (or budget's) own. Exactly one plan is the default, the plan of every account that was
// never assigned one.
export const plans = pgTable(
  "plans",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    key: text("key").notNull().unique(),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    isDefault: boolean("is_default").notNull().default(false),
    // An API key with accounts:write may move an account to this plan even when it loosens what
    // binds the account (a billing service upgrading a customer). Setting it is a raise, asked of
    // two admins once (lib/changes/plan-kinds.ts); clearing it is one person's.
    keyAssignable: boolean("key_assignable").notNull().default(false),
    // Bumped by every edit of the plan or its values, so two staff saving one plan conflict.
    version: integer("version").notNull().default(1),
    ...timestamps,
  },
  (t) => [
    check("plans_key_format", sql`${t.key} ~ ${sql.raw(`'${ENDPOINT_KEY_PATTERN.source}'`)}`),
    // At most one default; the write path keeps it exactly one (a switch is one transaction).
    uniqueIndex("plans_one_default_idx")
      .on(t.isDefault)
      .where(sql`${t.isDefault}`),
  ],
);

export type Plan = typeof plans.$inferSelect;
export type NewPlan = typeof plans.$inferInsert;

// A plan's value on one per-account limit (a per-caller ceiling, in units or calls; a per-account
// budget, in micros of its currency), inside the limit's bounds or 0, which refuses the plan's
// accounts there as an override of 0 refuses one account.
export const planLimitValues = pgTable(
  "plan_limit_values",
  {
    planId: integer("plan_id")
      .notNull()
      .references(() => plans.id, { onDelete: "cascade" }),
    limitId: integer("limit_id")
      .notNull()
      .references(() => limits.id, { onDelete: "cascade" }),
    value: bigint("value", { mode: "number" }).notNull(),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.planId, t.limitId] }), check("plan_limit_values_nonneg", sql`${t.value} >= 0`)],
);

export type PlanLimitValue = typeof planLimitValues.$inferSelect;

// Every billing account Ceilings knows: registered by the first reservation batch that names it
// (so staff can find it by prefix), or by an assignment. plan_id null: the default plan, whichever
// plan that is when the batch runs. Blocked: every reservation naming it is refused on every
// endpoint (gate blocked), including endpoints and ceilings made after the block; its overrides
// stay untouched, so an unblock puts back exactly what was there.
export const accounts = pgTable(
  "accounts",
  {
    account: text("account").primaryKey(),
    planId: integer("plan_id").references(() => plans.id, { onDelete: "restrict" }),
    planSetAt: timestamp("plan_set_at", { withTimezone: true }),
    planSetBy: text("plan_set_by"),
    blockedAt: timestamp("blocked_at", { withTimezone: true }),
    blockedBy: text("blocked_by"),
    blockReason: text("block_reason"),
    firstSeenAt: timestamp("first_seen_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Search by prefix (LIKE 'acct_4a%'), whatever the database's collation.
    index("accounts_account_prefix_idx").on(t.account.op("text_pattern_ops")),
    // The accounts of one plan, and how many there are.
    index("accounts_plan_idx")
      .on(t.planId, t.account)
      .where(sql`${t.planId} is not null`),
    index("accounts_blocked_idx")
      .on(t.blockedAt)
      .where(sql`${t.blockedAt} is not null`),
    check("accounts_account_length", sql`char_length(${t.account}) between 1 and 200`),
  ],
);

export type Account = typeof accounts.$inferSelect;
