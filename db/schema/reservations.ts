import { sql } from "drizzle-orm";
import { bigint, boolean, check, customType, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";

export const reservationState = pgEnum("reservation_state", ["held", "settled", "released", "expired"]);

/**
 * One charge of a reservation on one counter (its limit, scope key and window start): what settle,
 * release and expiry give back or keep. The amount is in the limit's measure: units (u) or calls
 * (c) for a ceiling, micros (m) for a budget. Stored as the composite type reservation_charge
 * (migration 0044), typed values rather than JSON: reserve_batch writes them for every grant.
 */
export type ReservationCharge = { limitId: number; scopeKey: string; windowStart: Date; measure: "u" | "c" | "m"; amount: number };

/** A composite field or array element as Postgres reads it: quoted, quotes and backslashes escaped. */
const quoted = (v: string) => `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/**
 * The items of an array literal `{a,"b"}` (open "{", close "}") or a composite `(a,"b",)` (open
 * "(", close ")"): a quoted item unescaped ("" or \" for a quote), an empty unquoted one NULL.
 */
function literalItems(text: string, open: string, close: string): (string | null)[] {
  if (text[0] !== open || text.at(-1) !== close) throw new Error(`not a ${open}${close} literal: ${text.slice(0, 40)}`);
  const body = text.slice(1, -1);
  if (open === "{" && body === "") return [];
  const items: (string | null)[] = [];
  let i = 0;
  for (;;) {
    let item: string | null = "";
    if (body[i] === '"') {
      for (i++; i < body.length; i++) {
        if (body[i] === "\\") item += body[++i];
        else if (body[i] === '"' && body[i + 1] === '"') item += body[++i];
        else if (body[i] === '"') break;
        else item += body[i];
      }
      i++;
    } else {
      const end = body.indexOf(",", i);
      item = body.slice(i, end < 0 ? body.length : end);
      i += item.length;
      if (item === "" || (open === "{" && item === "NULL")) item = null;
    }
    items.push(item);
    if (i >= body.length) return items;
    i++; // the comma
    if (i === body.length) return [...items, null]; // an empty last item
  }
}

/** A timestamptz as Postgres prints it ("2026-12-05 00:00:00.5+00") as a Date. */
const timestampOf = (text: string) => new Date(text.replace(" ", "T").replace(/([+-]\d\d)$/, "$1:00"));

/**
 * reservation_charge[]: written by reserve_batch for every grant; through drizzle only by the few
 * writers that are not (the demo's history, test fixtures) and read back as they wrote it.
 */
const reservationCharges = customType<{ data: ReservationCharge[]; driverData: string | (string | null)[] }>({
  dataType: () => "reservation_charge[]",
  toDriver: (charges) =>
    `{${charges.map((c) => quoted(`(${c.limitId},${quoted(c.scopeKey)},${quoted(c.windowStart.toISOString())},${c.measure},${c.amount})`)).join(",")}}`,
  // The driver splits an array whose element type it read at connect (postgres.js's fetch_types);
  // without that it passes the array's literal.
  fromDriver: (value) =>
    (Array.isArray(value) ? value : literalItems(value, "{", "}")).map((element) => {
      const [limitId, scopeKey, windowStart, measure, amount] = literalItems(element ?? "()", "(", ")");
      return {
        limitId: Number(limitId),
        scopeKey: scopeKey ?? "",
        windowStart: timestampOf(windowStart ?? ""),
        measure: measure as ReservationCharge["measure"],
        amount: Number(amount),
      };
    }),
});

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
    charges: reservationCharges("charges").notNull(),
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
