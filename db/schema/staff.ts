import { integer, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { timestamps } from "./columns";

export const staffRole = pgEnum("staff_role", ["viewer", "operator", "admin"]);

export const staff = pgTable("staff", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  email: text("email").notNull().unique(),
  name: text("name").notNull().default(""),
  passwordHash: text("password_hash").notNull(),
  role: staffRole("role").notNull(),
  disabledAt: timestamp("disabled_at", { withTimezone: true }),
  // Bumped on disable, demotion or password change: every session carrying an older version ends.
  sessionVersion: integer("session_version").notNull().default(1),
  ...timestamps,
});

export type Staff = typeof staff.$inferSelect;
export type StaffRole = (typeof staffRole.enumValues)[number];
