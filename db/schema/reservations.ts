import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

export const reservationState = pgEnum("reservation_state", ["held", "settled", "released", "expired"]);

/**
 * One charge of a reservation on one counter (l: its limit, k: scope key, w: window start): what
 * settle, release and expiry give back or keep. n is in the limit's measure m: units (u) or calls
 * (c) for a ceiling, micros (m) for a budget.
 */
export type ReservationCharge = { l: number; k: string; w: string; n: number; m: "u" | "c" | "m" };

export const reservations = pgTable(
  "reservations",
  {
    id: uuid("id")
      .primaryKey()
      .default(sql`gen_random_uuid()`),
    // An endpoint, but no foreign key: its check took a KEY SHARE lock on the endpoint's row for
    // every reservation, and two batches in flight made a multixact of it each time. Endpoints
    // are archived, not deleted; a delete of one with reservations is refused by a trigger
    // (migration 0043), and reservations are written by reserve_batch alone, for endpoints it
    // read under their locks.
    endpointId: integer("endpoint_id").notNull(),
    caller: text("caller").notNull().default(""),
    destination: text("destination"),
    destinationKey: text("destination_key"),
    amount: bigint("amount", { mode: "number" }).notNull(),
    // The units of each priced part, when the endpoint has several ({"input": 1200, "output": 800});
    // null when the request named one amount of the one part.
    parts: jsonb("parts").$type<Record<string, number>>(),
    // The worst case in micros: the parts at their prices, rounded up once.
    money: bigint("money", { mode: "number" }).notNull().default(0),
    // Each part's price (picos a unit) when the reservation charged a budget: a settle corrects the
    // budgets to the actual parts at the prices the reservation was granted at.
    prices: jsonb("prices").$type<Record<string, number>>(),
    settledAmount: bigint("settled_amount", { mode: "number" }),
    settledParts: jsonb("settled_parts").$type<Record<string, number>>(),
    settledMoney: bigint("settled_money", { mode: "number" }),
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
    index("reservations_held_expiry_idx")
      .on(t.expiresAt)
      .where(sql`${t.state} = 'held'`),
    index("reservations_endpoint_created_idx").on(t.endpointId, t.createdAt),
    // An account's latest reservations (its page): a range instead of a scan of the ledger.
    index("reservations_caller_created_idx")
      .on(t.caller, t.createdAt.desc(), t.id.desc())
      .where(sql`${t.caller} <> ''`),
    check("reservations_amount_positive", sql`${t.amount} > 0`),
  ],
);

export type Reservation = typeof reservations.$inferSelect;
