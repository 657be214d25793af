import { bigint, date, integer, pgTable, primaryKey, timestamp } from "drizzle-orm/pg-core";
import { endpoints } from "./endpoints";

// The ledger per endpoint and UTC day, rolled up by the worker (lib/reconciliation/ledger-days.ts)
// so the readiness of every endpoint (on every overview load) reads a few rows per endpoint instead
// of counting millions of reservations. Recent days are recomputed until their reservations can no
// longer change; computed_at says how fresh a row is.
export const reservationDays = pgTable(
  "reservation_days",
  {
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => endpoints.id),
    day: date("day", { mode: "string" }).notNull(),
    reservations: bigint("reservations", { mode: "number" }).notNull(),
    settled: bigint("settled", { mode: "number" }).notNull(),
    released: bigint("released", { mode: "number" }).notNull(),
    expired: bigint("expired", { mode: "number" }).notNull(),
    held: bigint("held", { mode: "number" }).notNull(),
    computedAt: timestamp("computed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.endpointId, t.day] })],
);

export type ReservationDay = typeof reservationDays.$inferSelect;
