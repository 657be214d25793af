import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, jsonb, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { budgets } from "./budgets";
import { ceilings } from "./ceilings";
import { endpoints } from "./endpoints";
import { staff } from "./staff";

// Change control (lib/changes). Lowering spend takes one person; raising it takes two. A raise is
// asked as a change request and applied by a second admin; break glass applies it alone, audited
// and acknowledged later. A raise may end: raise_ends remembers what to put back. A kill, a restore
// or a value may be scheduled, once or every day.

export const changeRequestState = pgEnum("change_request_state", ["pending", "applied", "rejected", "stale", "expired", "cancelled"]);

export const changeRequests = pgTable(
  "change_requests",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    // What is asked (lib/changes/kinds.ts): ceiling.value, endpoint.per_call_max, ceiling.add,
    // endpoint.unarchive, budget.value, schedule, ...
    kind: text("kind").notNull(),
    // What it touches, for listing it on its endpoint or budget; the change itself is in `change`.
    endpointId: integer("endpoint_id").references(() => endpoints.id),
    ceilingId: integer("ceiling_id").references(() => ceilings.id, { onDelete: "set null" }),
    budgetId: integer("budget_id").references(() => budgets.id),
    // The parameters the approval applies, as the kind's applier takes them.
    change: jsonb("change").$type<Record<string, unknown>>().notNull(),
    // What was in force when it was asked. Approval compares it with what is in force then, under
    // the endpoint lock: any difference makes the request stale.
    before: jsonb("before").$type<Record<string, unknown>>().notNull(),
    after: jsonb("after").$type<Record<string, unknown>>().notNull(),
    // One line for lists and alerts: "email.send units/day 1,000 → 10,000".
    summary: text("summary").notNull(),
    // The worst case a day (units) and in money (micros of `currency`) before and after, when known.
    worstCaseBefore: bigint("worst_case_before", { mode: "number" }),
    worstCaseAfter: bigint("worst_case_after", { mode: "number" }),
    worstMoneyBefore: bigint("worst_money_before", { mode: "number" }),
    worstMoneyAfter: bigint("worst_money_after", { mode: "number" }),
    currency: text("currency"),
    // A temporary raise: ends this long after it is applied, or at this time (one of them or neither).
    endsAfterSeconds: integer("ends_after_seconds"),
    endsAt: timestamp("ends_at", { withTimezone: true }),
    reason: text("reason").notNull(),
    requestedById: integer("requested_by_id")
      .notNull()
      .references(() => staff.id),
    requestedBy: text("requested_by").notNull(),
    requestedVia: text("requested_via").notNull().default("dashboard"),
    requestedAt: timestamp("requested_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    state: changeRequestState("state").notNull().default("pending"),
    // Applied by the requester alone, with a reason, because no second admin could be reached.
    breakGlass: boolean("break_glass").notNull().default(false),
    decidedById: integer("decided_by_id").references(() => staff.id),
    decidedBy: text("decided_by"),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    decisionNote: text("decision_note"),
    // Break glass stays on the overview until another admin acknowledges it.
    acknowledgedById: integer("acknowledged_by_id").references(() => staff.id),
    acknowledgedBy: text("acknowledged_by"),
    acknowledgedAt: timestamp("acknowledged_at", { withTimezone: true }),
  },
  (t) => [
    index("change_requests_pending_idx")
      .on(t.expiresAt)
      .where(sql`${t.state} = 'pending'`),
    index("change_requests_endpoint_idx").on(t.endpointId, t.requestedAt.desc()),
    index("change_requests_requested_idx").on(t.requestedAt.desc(), t.id.desc()),
    index("change_requests_unacknowledged_idx")
      .on(t.decidedAt)
      .where(sql`${t.breakGlass} and ${t.acknowledgedAt} is null`),
    // The second person, held by the database too: whoever decides or acknowledges is never the
    // requester (a requester withdrawing their own request is `cancelled`).
    check("change_requests_second_person", sql`${t.decidedById} is null or ${t.decidedById} <> ${t.requestedById} or ${t.state} = 'cancelled'`),
    check("change_requests_ack_second_person", sql`${t.acknowledgedById} is null or ${t.acknowledgedById} <> ${t.requestedById}`),
    check("change_requests_break_glass_applied", sql`not ${t.breakGlass} or ${t.state} = 'applied'`),
    // A decision names its decider, unless it is a break glass; expired, stale and cancelled stay valid without one.
    check("change_requests_decided_by", sql`${t.state} not in ('applied', 'rejected') or ${t.decidedById} is not null or ${t.breakGlass}`),
    check("change_requests_one_end", sql`${t.endsAfterSeconds} is null or ${t.endsAt} is null`),
    check("change_requests_ends_after_positive", sql`${t.endsAfterSeconds} is null or ${t.endsAfterSeconds} > 0`),
  ],
);

export type ChangeRequest = typeof changeRequests.$inferSelect;
export type NewChangeRequest = typeof changeRequests.$inferInsert;

export const raiseEndState = pgEnum("raise_end_state", ["active", "reverted", "superseded", "cancelled"]);

/** A raise in force until ends_at; the worker puts revert_to back if raised_to is still in force. */
export const raiseEnds = pgTable(
  "raise_ends",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    requestId: integer("request_id").references(() => changeRequests.id),
    endpointId: integer("endpoint_id").references(() => endpoints.id),
    // Exactly one of them: the value raised is a ceiling's or a budget's.
    ceilingId: integer("ceiling_id").references(() => ceilings.id, { onDelete: "cascade" }),
    budgetId: integer("budget_id").references(() => budgets.id),
    revertTo: bigint("revert_to", { mode: "number" }).notNull(),
    raisedTo: bigint("raised_to", { mode: "number" }).notNull(),
    // The ceiling's (or budget's) version right after the raise was written, for the record. Whether
    // the end still puts the value back is decided by the audit log, not the version: a direct edit
    // since (a lowering, a kill, a restore) keeps the end; only a change request applied since
    // supersedes it (lib/changes/raise-ends.ts). Nullable only for safety; recordRaiseEnd always sets it.
    raisedVersion: integer("raised_version"),
    endsAt: timestamp("ends_at", { withTimezone: true }).notNull(),
    state: raiseEndState("state").notNull().default("active"),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    resolvedAt: timestamp("resolved_at", { withTimezone: true }),
    resolvedNote: text("resolved_note"),
  },
  (t) => [
    index("raise_ends_due_idx")
      .on(t.endsAt)
      .where(sql`${t.state} = 'active'`),
    index("raise_ends_ceiling_idx")
      .on(t.ceilingId)
      .where(sql`${t.state} = 'active'`),
    check("raise_ends_one_target", sql`(${t.ceilingId} is null) <> (${t.budgetId} is null)`),
  ],
);

export type RaiseEnd = typeof raiseEnds.$inferSelect;

export const scheduleAction = pgEnum("schedule_action", ["kill", "restore", "value"]);
export const scheduleRepeat = pgEnum("schedule_repeat", ["once", "daily"]);
export const scheduleState = pgEnum("schedule_state", ["awaiting_approval", "scheduled", "done", "cancelled"]);

/** A kill, a restore or a value at a time, once or every day at that time of day (UTC). */
export const scheduledChanges = pgTable(
  "scheduled_changes",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => endpoints.id),
    // Null: every ceiling of the endpoint (a kill or a restore of the whole endpoint).
    ceilingId: integer("ceiling_id").references(() => ceilings.id, { onDelete: "cascade" }),
    action: scheduleAction("action").notNull(),
    value: bigint("value", { mode: "number" }),
    repeat: scheduleRepeat("repeat").notNull().default("once"),
    // When it is next due; a daily schedule moves it a day on after each run.
    runAt: timestamp("run_at", { withTimezone: true }).notNull(),
    state: scheduleState("state").notNull().default("scheduled"),
    // A scheduled raise is approved when it is scheduled: its request.
    requestId: integer("request_id").references(() => changeRequests.id),
    reason: text("reason").notNull(),
    createdById: integer("created_by_id").references(() => staff.id),
    createdBy: text("created_by").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    runs: integer("runs").notNull().default(0),
    lastRunAt: timestamp("last_run_at", { withTimezone: true }),
    lastOutcome: text("last_outcome"),
    cancelledBy: text("cancelled_by"),
    cancelledAt: timestamp("cancelled_at", { withTimezone: true }),
  },
  (t) => [
    index("scheduled_changes_due_idx")
      .on(t.runAt)
      .where(sql`${t.state} = 'scheduled'`),
    index("scheduled_changes_endpoint_idx").on(t.endpointId, t.runAt),
    check("scheduled_changes_value", sql`(${t.action} = 'value') = (${t.value} is not null)`),
    check("scheduled_changes_value_nonneg", sql`${t.value} is null or ${t.value} >= 0`),
    check("scheduled_changes_value_on_ceiling", sql`${t.action} <> 'value' or ${t.ceilingId} is not null`),
  ],
);

export type ScheduledChange = typeof scheduledChanges.$inferSelect;
