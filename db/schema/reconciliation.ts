import { sql } from "drizzle-orm";
import { bigint, boolean, check, date, index, integer, jsonb, pgEnum, pgTable, primaryKey, text, time, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { budgets } from "./budgets";
import { endpoints } from "./endpoints";

// Reconciliation (lib/reconciliation): the provider's own usage beside what Ceilings charged, per
// day. A usage source is where a provider reports usage (its API or a file); the worker pulls it
// day by day, keeps the raw rows, maps each provider item to an endpoint or a budget by the
// source's rules, and compares the sum with the ledger. A provider's day is its own: a source
// names the time zone its days are counted in, and Ceilings counts its charges over that same
// interval.

export const usageSourceKind = pgEnum("usage_source_kind", ["openai", "anthropic", "twilio", "file", "sendgrid", "postmark", "ses"]);

export const usageSources = pgTable(
  "usage_sources",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    name: text("name").notNull().unique(),
    kind: usageSourceKind("kind").notNull(),
    // The API's base URL (the provider's own by default; a proxy's or a test server's otherwise).
    // A file source: an http(s) URL or a local path the worker reads every day, or null when files
    // are only imported by hand (dashboard or CLI).
    location: text("location"),
    // `env:CEILINGS_SECRET_...`: the worker's environment variable holding the admin key or
    // auth token. Never the secret itself.
    credentialRef: text("credential_ref"),
    // Twilio's Account SID (the path names it); OpenAI's project or Anthropic's workspace to
    // filter by, when one key sees several. Null otherwise.
    account: text("account"),
    // The IANA time zone the provider's days are counted in: UTC for the OpenAI, Anthropic and
    // Twilio APIs; America/New_York for Postmark's statistics.
    timeZone: text("time_zone").notNull().default("UTC"),
    currency: text("currency").notNull().default("USD"),
    // Each pull asks for this many complete days back from yesterday: providers revise days.
    lookbackDays: integer("lookback_days").notNull().default(3),
    // The reconciliation alert: a day drifts when |billed − charged| is at least this share of the
    // larger (basis points: 200 = 2 %) AND at least this much money (micros: 1,000,000 = $1).
    thresholdBasisPoints: integer("threshold_basis_points").notNull().default(200),
    thresholdMicros: bigint("threshold_micros", { mode: "number" }).notNull().default(1_000_000),
    // The unmapped alert: money on items no rule maps, per provider day, at or above this (micros)
    // raises `reconciliation_unmapped` once for that day. Nothing billed goes unseen.
    unmappedThresholdMicros: bigint("unmapped_threshold_micros", { mode: "number" }).notNull().default(1_000_000),
    // The morning report: the source is pulled each day at this local time in its time zone (after
    // the provider publishes the day before), so a day that drifts is alerted that morning.
    pullAt: time("pull_at").notNull().default("06:00"),
    // A paused source is not pulled (its rows and comparisons stay).
    enabled: boolean("enabled").notNull().default(true),
    // On demand: set by "Pull now"; the worker's fast lane pulls the source and clears it.
    pullRequestedAt: timestamp("pull_requested_at", { withTimezone: true }),
    // A claim: one worker pulls a source at a time; a claim older than this is abandoned.
    pullingUntil: timestamp("pulling_until", { withTimezone: true }),
    lastPullAt: timestamp("last_pull_at", { withTimezone: true }),
    lastPullOk: timestamp("last_pull_ok_at", { withTimezone: true }),
    lastPullError: text("last_pull_error"),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("usage_sources_lookback", sql`${t.lookbackDays} between 1 and 35`),
    check("usage_sources_threshold", sql`${t.thresholdBasisPoints} between 0 and 10000 and ${t.thresholdMicros} >= 0`),
    check("usage_sources_unmapped_threshold", sql`${t.unmappedThresholdMicros} >= 0`),
  ],
);

export type UsageSource = typeof usageSources.$inferSelect;

// Which endpoint or budget a provider item counts for. `match` is the item as the provider names
// it (a model, a cost line item, a Twilio category, a file's item), exact, or a prefix when it ends
// in `*`. The longest match wins, so `gpt-4o-mini*` beats `gpt-4o*`. A count without a price is
// priced at `part`'s price (the endpoint's first part when null); a budget's rows must carry cost.
export const usageSourceRules = pgTable(
  "usage_source_rules",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    sourceId: integer("source_id")
      .notNull()
      .references(() => usageSources.id, { onDelete: "cascade" }),
    match: text("match").notNull(),
    endpointId: integer("endpoint_id").references(() => endpoints.id),
    budgetId: integer("budget_id").references(() => budgets.id),
    part: text("part"),
    // Which of the endpoint's parts each provider usage field is priced at ({"cache_read":
    // "cached"}): a field not named here is priced at the part of its own name, else at `part`.
    fieldParts: jsonb("field_parts").$type<Record<string, string>>().notNull().default({}),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("usage_source_rules_match_idx").on(t.sourceId, t.match),
    check("usage_source_rules_one_target", sql`(${t.endpointId} is null) <> (${t.budgetId} is null)`),
  ],
);

export type UsageSourceRule = typeof usageSourceRules.$inferSelect;

// One pulled day of one source: replaced whole when the day is pulled again (with its rows).
export const usagePulls = pgTable(
  "usage_pulls",
  {
    sourceId: integer("source_id")
      .notNull()
      .references(() => usageSources.id, { onDelete: "cascade" }),
    // The provider's day, in the source's time zone.
    day: date("day", { mode: "string" }).notNull(),
    pulledAt: timestamp("pulled_at", { withTimezone: true }).notNull().defaultNow(),
    // 'api' (the worker), 'file' (an import, by whom).
    via: text("via").notNull(),
    rows: integer("rows").notNull(),
    // Rows no rule maps: shown to staff so an unmapped model is never silently ignored.
    unmappedRows: integer("unmapped_rows").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.sourceId, t.day] })],
);

// The provider's rows as reported, one per item and day, with what they were mapped to.
export const usageRows = pgTable(
  "usage_rows",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    sourceId: integer("source_id")
      .notNull()
      .references(() => usageSources.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    item: text("item").notNull(),
    units: bigint("units", { mode: "number" }).notNull().default(0),
    // The provider's usage field the units count (input, output, cached_input, cache_read,
    // cache_write_5m, cache_write_1h...), priced at the endpoint's part it maps to; null: one count.
    field: text("field"),
    // What the units are, as the provider says: Twilio's usage_unit (segments, minutes), FOCUS's
    // ConsumedUnit; null when the provider does not say (tokens, messages).
    unit: text("unit"),
    // A provider's roll-up of other rows of the same day (Twilio's "sms" = inbound + outbound):
    // kept as reported, never mapped, never counted as unmapped, so nothing is billed twice.
    rollup: boolean("rollup").notNull().default(false),
    // Money the provider reported, in micros of the source's currency (rounded to the nearest
    // micro); null when it reports counts alone (SendGrid, Postmark, SES, a usage API).
    costMicros: bigint("cost_micros", { mode: "number" }),
    endpointId: integer("endpoint_id").references(() => endpoints.id),
    budgetId: integer("budget_id").references(() => budgets.id),
    // Priced at this part when the row has no cost.
    part: text("part"),
    raw: jsonb("raw").$type<Record<string, unknown>>().notNull(),
  },
  (t) => [
    index("usage_rows_source_day_idx").on(t.sourceId, t.day),
    index("usage_rows_endpoint_day_idx")
      .on(t.endpointId, t.day)
      .where(sql`${t.endpointId} is not null`),
    index("usage_rows_budget_day_idx")
      .on(t.budgetId, t.day)
      .where(sql`${t.budgetId} is not null`),
    check("usage_rows_units_nonneg", sql`${t.units} >= 0`),
  ],
);

// The comparison of one endpoint (or budget) on one provider day: billed beside charged.
// Recomputed from usage_rows and the ledger whenever the day is pulled or the worker revisits it.
export const reconciliationDays = pgTable(
  "reconciliation_days",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    endpointId: integer("endpoint_id").references(() => endpoints.id),
    budgetId: integer("budget_id").references(() => budgets.id),
    sourceId: integer("source_id")
      .notNull()
      .references(() => usageSources.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    // [dayStart, dayEnd): the provider's day in its time zone, as instants.
    dayStart: timestamp("day_start", { withTimezone: true }).notNull(),
    dayEnd: timestamp("day_end", { withTimezone: true }).notNull(),
    billedUnits: bigint("billed_units", { mode: "number" }).notNull(),
    billedMicros: bigint("billed_micros", { mode: "number" }).notNull(),
    // 'reported': billedMicros is the provider's own money; 'priced': units at the endpoint's price.
    billedMoney: text("billed_money").notNull(),
    chargedUnits: bigint("charged_units", { mode: "number" }).notNull(),
    chargedMicros: bigint("charged_micros", { mode: "number" }).notNull(),
    // Reservations of the day still held when compared: the day is not final while any are.
    heldReservations: integer("held_reservations").notNull().default(0),
    computedAt: timestamp("computed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("reconciliation_days_endpoint_idx")
      .on(t.endpointId, t.day)
      .where(sql`${t.endpointId} is not null`),
    uniqueIndex("reconciliation_days_budget_idx")
      .on(t.budgetId, t.day)
      .where(sql`${t.budgetId} is not null`),
    index("reconciliation_days_day_idx").on(t.day),
    check("reconciliation_days_one_target", sql`(${t.endpointId} is null) <> (${t.budgetId} is null)`),
    check("reconciliation_days_billed_money", sql`${t.billedMoney} in ('reported', 'priced')`),
  ],
);

export type ReconciliationDay = typeof reconciliationDays.$inferSelect;

export const providerCapMeasure = pgEnum("provider_cap_measure", ["units", "money"]);
export const providerCapWindow = pgEnum("provider_cap_window", ["day", "month"]);

// The second cap: the limit set at the provider itself (seed article: "Set one. It is the second
// line"). Recorded by staff; no row means none is recorded.
export const providerCaps = pgTable(
  "provider_caps",
  {
    endpointId: integer("endpoint_id")
      .primaryKey()
      .references(() => endpoints.id),
    measure: providerCapMeasure("measure").notNull(),
    window: providerCapWindow("window").notNull(),
    // Units, or micros of the endpoint's currency.
    amount: bigint("amount", { mode: "number" }).notNull(),
    // Where it is set: "OpenAI project llm-prod, Settings > Limits, monthly budget".
    setAt: text("set_at").notNull(),
    recordedBy: text("recorded_by").notNull(),
    recordedAt: timestamp("recorded_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("provider_caps_amount_positive", sql`${t.amount} > 0`)],
);

export type ProviderCap = typeof providerCaps.$inferSelect;
