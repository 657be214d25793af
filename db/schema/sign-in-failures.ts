import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";

// Failed sign-ins per account ("account:<email>") and per address ("address:<ip>"), to slow guessing.
export const signInFailures = pgTable("sign_in_failures", {
  key: text("key").primaryKey(),
  failures: integer("failures").notNull().default(0),
  firstAt: timestamp("first_at", { withTimezone: true }).notNull().defaultNow(),
  lastAt: timestamp("last_at", { withTimezone: true }).notNull().defaultNow(),
});
