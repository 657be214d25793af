import { sql } from "drizzle-orm";
import { bigint, check, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";
import { ceilings } from "./ceilings";

// A per-caller ceiling's value for one billing account; 0 blocks that account alone.
export const ceilingOverrides = pgTable(
  "ceiling_overrides",
  {
    ceilingId: integer("ceiling_id")
      .notNull()
      .references(() => ceilings.id, { onDelete: "cascade" }),
    caller: text("caller").notNull(),
    value: bigint("value", { mode: "number" }).notNull(),
    reason: text("reason").notNull(),
    ...timestamps,
  },
  (t) => [primaryKey({ columns: [t.ceilingId, t.caller] }), check("ceiling_overrides_value_nonneg", sql`${t.value} >= 0`)],
);

export type CeilingOverride = typeof ceilingOverrides.$inferSelect;
