import { integer, pgTable, serial, text, timestamp } from "drizzle-orm/pg-core";

// Each time the SQL functions of db/functions/ were applied to this database (db/functions.ts,
// after the migrations): the folder's hash, so the step runs again only when the folder changed.
export const functionApplies = pgTable("function_applies", {
  id: serial("id").primaryKey(),
  hash: text("hash").notNull(),
  files: integer("files").notNull(),
  appliedAt: timestamp("applied_at", { withTimezone: true }).notNull().defaultNow(),
});
