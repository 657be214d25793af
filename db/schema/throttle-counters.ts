import { integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";

// Attempts per caller per endpoint per minute: the soft throttle. Approximate by design.
export const throttleCounters = pgTable(
  "throttle_counters",
  {
    endpointId: integer("endpoint_id").notNull(),
    caller: text("caller").notNull(),
    minute: timestamp("minute", { withTimezone: true }).notNull(),
    attempts: integer("attempts").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.caller, t.minute] })],
);
