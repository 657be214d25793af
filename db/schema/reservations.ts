import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { endpoints } from "./endpoints";

export const reservationState = pgEnum("reservation_state", ["held", "settled", "released", "expired"]);

/** One charge of a reservation on one counter: what settle, release and expiry give back or keep. */
export type ReservationCharge = { c: number; k: string; w: string; n: number };

export const reservations = pgTable(
  "reservations",
  {
    id: uuid("id").primaryKey().default(sql`gen_random_uuid()`),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => endpoints.id),
    caller: text("caller").notNull().default(""),
    destination: text("destination"),
    destinationKey: text("destination_key"),
    amount: bigint("amount", { mode: "number" }).notNull(),
    settledAmount: bigint("settled_amount", { mode: "number" }),
    state: reservationState("state").notNull().default("held"),
    overrun: boolean("overrun").notNull().default(false),
    idempotencyKey: text("idempotency_key"),
    charges: jsonb("charges").$type<ReservationCharge[]>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("reservations_idempotency_idx")
      .on(t.endpointId, t.caller, t.idempotencyKey)
      .where(sql`${t.idempotencyKey} is not null`),
    index("reservations_held_expiry_idx").on(t.expiresAt).where(sql`${t.state} = 'held'`),
    index("reservations_endpoint_created_idx").on(t.endpointId, t.createdAt),
    check("reservations_amount_positive", sql`${t.amount} > 0`),
  ],
);

export type Reservation = typeof reservations.$inferSelect;
