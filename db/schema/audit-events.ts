import { bigint, boolean, index, integer, jsonb, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";

// config: a catalog file applied with `npm run ceilings -- apply` (the actor names the OS user).
// api_key: a trusted API key (the billing service assigning a plan); the actor is ck_<prefix> (name).
export const actorType = pgEnum("actor_type", ["staff", "cli", "system", "config", "api_key"]);

// Append-only: a trigger in the migrations refuses UPDATE, DELETE and TRUNCATE.
// Ids are stored without foreign keys so the history outlives what it describes.
export const auditEvents = pgTable(
  "audit_events",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    actorType: actorType("actor_type").notNull(),
    actor: text("actor").notNull(),
    // ceiling.adjust, ceiling.bounds, ceiling.kill, ceiling.restore, override.set, override.remove,
    // api_key.create, api_key.revoke, staff.add, staff.role, staff.disable, staff.enable, alert.ack, ...
    action: text("action").notNull(),
    endpointId: integer("endpoint_id"),
    endpointKey: text("endpoint_key"),
    ceilingId: integer("ceiling_id"),
    target: text("target"),
    rawInput: text("raw_input"),
    previousValue: bigint("previous_value", { mode: "number" }),
    appliedValue: bigint("applied_value", { mode: "number" }),
    clamped: boolean("clamped"),
    reason: text("reason"),
    details: jsonb("details").$type<Record<string, unknown>>(),
  },
  (t) => [
    index("audit_events_at_idx").on(t.at.desc(), t.id.desc()),
    index("audit_events_endpoint_idx").on(t.endpointId, t.at.desc()),
    index("audit_events_action_idx").on(t.action, t.at.desc()),
  ],
);

export type AuditEvent = typeof auditEvents.$inferSelect;
export type NewAuditEvent = typeof auditEvents.$inferInsert;
