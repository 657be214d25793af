import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { staff, staffRole } from "./staff";

// Who gave whom control of an account: created it (and so chose its first password), raised its
// role, or set its password. Append-only (a trigger and the app role's grants): the database's
// independence rule (ceilings.staff_independent) walks these rows, so nobody may rewrite them.
// granted_by_id is null when no staff member acted (`npm run staff`, the demo seed): a root.
export const staffGrants = pgTable(
  "staff_grants",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    staffId: integer("staff_id")
      .notNull()
      .references(() => staff.id),
    grantedById: integer("granted_by_id").references(() => staff.id),
    // Who acted as the audit log names them (a staff email, or the OS user of the CLI).
    grantedBy: text("granted_by").notNull(),
    kind: text("kind", { enum: ["create", "promote", "password"] }).notNull(),
    // The role given (create, promote); null for a password set by someone else.
    role: staffRole("role"),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("staff_grants_kind", sql`${t.kind} in ('create', 'promote', 'password')`),
    check("staff_grants_not_self", sql`${t.grantedById} is null or ${t.grantedById} <> ${t.staffId}`),
    index("staff_grants_staff_idx").on(t.staffId),
    index("staff_grants_granted_by_idx").on(t.grantedById),
  ],
);

export type StaffGrant = typeof staffGrants.$inferSelect;

// A staff member's personal token for the command line: proves who runs `approve`, `reject`,
// `acknowledge` and `apply --break-glass`. Only a SHA-256 of the token is stored. It is dead once
// revoked, once its owner is disabled, or once their session version moves on (a password change,
// a demotion, a disable): the version it was made under is kept and compared on every use.
export const staffTokens = pgTable(
  "staff_tokens",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    staffId: integer("staff_id")
      .notNull()
      .references(() => staff.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull().unique(),
    sessionVersion: integer("session_version").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("staff_tokens_staff_idx").on(t.staffId)],
);

export type StaffToken = typeof staffTokens.$inferSelect;
