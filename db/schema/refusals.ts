import { sql } from "drizzle-orm";
import { bigint, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { budgets } from "./budgets";
import { ceilings } from "./ceilings";
import { endpoints } from "./endpoints";
import { GATES } from "../../lib/vocabulary";

export const refusalGate = pgEnum("refusal_gate", GATES);

// Identical refusals (endpoint, gate, caller, destination) within one bucket share a row with a
// count, so a flood of refusals cannot become its own outage.
export const refusals = pgTable(
  "refusals",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    lastAt: timestamp("last_at", { withTimezone: true }).notNull().defaultNow(),
    bucket: timestamp("bucket", { withTimezone: true }).notNull(),
    endpointId: integer("endpoint_id").references(() => endpoints.id, { onDelete: "cascade" }),
    endpointKey: text("endpoint_key").notNull(),
    ceilingId: integer("ceiling_id").references(() => ceilings.id, { onDelete: "set null" }),
    // The budget that said no (gate budget).
    budgetId: integer("budget_id").references(() => budgets.id, { onDelete: "set null" }),
    gate: refusalGate("gate").notNull(),
    caller: text("caller").notNull().default(""),
    destination: text("destination").notNull().default(""),
    amount: bigint("amount", { mode: "number" }).notNull(),
    remaining: bigint("remaining", { mode: "number" }),
    count: integer("count").notNull().default(1),
    requestId: text("request_id"),
    detail: text("detail"),
  },
  (t) => [
    // The budget that refused is part of a fold's identity: two budgets refusing one caller on one
    // endpoint within a bucket stay two rows, each on its budget's page.
    uniqueIndex("refusals_dedupe_idx").on(t.endpointKey, t.gate, t.caller, t.destination, t.bucket, sql`coalesce(${t.budgetId}, 0)`),
    // gate and count ride along so the per-gate chart over a time range is an index-only scan
    // (drizzle has no INCLUDE). The log is insert-mostly with full pages, so indexing count costs
    // folds little: their updates are rarely HOT anyway.
    index("refusals_at_idx").on(t.at.desc(), t.id.desc(), t.gate, t.count),
    index("refusals_endpoint_at_idx").on(t.endpointId, t.at.desc(), t.id.desc()),
    index("refusals_gate_at_idx").on(t.gate, t.at.desc(), t.id.desc()),
    // The log filtered by endpoint and gate: without it, a gate an endpoint never met read every
    // refusal of the endpoint to find none (89 ms for 34,000 rows at 2 M refusals).
    index("refusals_endpoint_gate_at_idx").on(t.endpointId, t.gate, t.at.desc(), t.id.desc()),
    index("refusals_caller_at_idx").on(t.caller, t.at.desc(), t.id.desc()),
    index("refusals_destination_idx").on(t.destination.op("text_pattern_ops"), t.at.desc()),
  ],
);

export type Refusal = typeof refusals.$inferSelect;
