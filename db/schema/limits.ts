import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";
import { LIMIT_KINDS } from "../../lib/vocabulary";

// One row per limit, whatever its kind: a ceiling (units or calls of an endpoint) or a budget
// (micros over member endpoints). What the two kinds share is keyed by this id, so it is written
// once: per-account overrides now. A ceiling's or budget's row names its limit (limit_id), made
// with it by a trigger and removed with it (migration 0039); the kind says which table holds it.
export const limits = pgTable(
  "limits",
  {
    id: integer("id").primaryKey().generatedByDefaultAsIdentity(),
    kind: text("kind", { enum: LIMIT_KINDS }).notNull(),
  },
  (t) => [check("limits_kind", sql`${t.kind} in ('ceiling', 'budget')`)],
);

/** A limit's id for a new ceiling or budget row: the trigger that inserts the row makes the limit. */
export const nextLimitId = sql`nextval('limits_id_seq')`;

// One billing account's own value on a per-account limit (a per-caller ceiling or a per-account
// budget), in the limit's measure; 0 blocks that account alone on it. It may end by itself.
export const limitOverrides = pgTable(
  "limit_overrides",
  {
    limitId: integer("limit_id")
      .notNull()
      .references(() => limits.id, { onDelete: "cascade" }),
    caller: text("caller").notNull(),
    value: bigint("value", { mode: "number" }).notNull(),
    reason: text("reason").notNull(),
    // Null: until someone removes it. Otherwise it binds until then (the database's clock) and the
    // worker removes it after, with an audit row; a reservation never sees it past its end.
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    ...timestamps,
  },
  (t) => [
    primaryKey({ columns: [t.limitId, t.caller] }),
    check("limit_overrides_value_nonneg", sql`${t.value} >= 0`),
    index("limit_overrides_expires_idx")
      .on(t.expiresAt)
      .where(sql`${t.expiresAt} is not null`),
  ],
);

export type LimitOverride = typeof limitOverrides.$inferSelect;
export type NewLimitOverride = typeof limitOverrides.$inferInsert;
