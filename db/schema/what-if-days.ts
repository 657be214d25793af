import { customType, date, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { endpoints } from "./endpoints";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

// The what-if's ledger of one endpoint and UTC day (lib/changes/what-if-days.ts): every grant of
// the day made before `through`, in (created_at, id) order, one column per field, each an array of
// whole numbers at the width its largest needs. None of them is held, so none can change but by a
// late overrun (ceilings.settle on an expired or released reservation), which deletes its day's
// row. Replaying a month of a busy endpoint reads thirty rows of a few hundred kilobytes, and the
// grants since `through`, instead of a million reservations.
export const whatIfDays = pgTable(
  "what_if_days",
  {
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => endpoints.id),
    day: date("day", { mode: "string" }).notNull(),
    grants: integer("grants").notNull(),
    /** The grants made before this instant are here: the day's end once it is over and settled. */
    through: timestamp("through", { withTimezone: true, precision: 6 }).notNull(),
    /** Each grant's created_at in microseconds after the day began, each the step from the one before. */
    at: bytea("at").notNull(),
    amount: bytea("amount").notNull(),
    money: bytea("money").notNull(),
    /** What the grant finally charged, in units and in money (the counters once it resolved). */
    finalUnits: bytea("final_units").notNull(),
    finalMoney: bytea("final_money").notNull(),
    /** 1: a release with no overrun, which charged a calls ceiling nothing. */
    free: bytea("free").notNull(),
    /** An index into `callers` and into `destinations` (the destination_key, '' for none). */
    caller: bytea("caller").notNull(),
    destination: bytea("destination").notNull(),
    callers: text("callers").array().notNull(),
    destinations: text("destinations").array().notNull(),
    builtAt: timestamp("built_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.day] })],
);
