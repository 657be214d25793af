CREATE TABLE "window_totals" (
	"kind" text NOT NULL,
	"limit_id" integer NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"counters" bigint NOT NULL,
	"accounts" bigint NOT NULL,
	"held" bigint NOT NULL,
	"settled" bigint NOT NULL,
	"busiest" bigint NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "window_totals_kind_limit_id_window_start_pk" PRIMARY KEY("kind","limit_id","window_start"),
	CONSTRAINT "window_totals_kind" CHECK ("window_totals"."kind" in ('ceiling', 'budget'))
);
--> statement-breakpoint
CREATE TABLE "window_totals_state" (
	"kind" text PRIMARY KEY NOT NULL,
	"closed_through" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "refusal_hourly_unavailable_idx" ON "refusal_hourly" USING btree ("hour","endpoint_key","count") WHERE "refusal_hourly"."gate" = 'unavailable';--> statement-breakpoint
CREATE INDEX "refusals_endpoint_gate_at_idx" ON "refusals" USING btree ("endpoint_id","gate","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
-- The catalog tables hold tens of rows and change a few rows at a time, so autovacuum's default
-- (analyse after 50 changed rows plus a tenth of the table) never analyses them: the planner then
-- guesses their size from empty pages and, joining them to the big tables, reads every
-- reservation for the budgets list (275 ms at 1 M reservations; 9 ms once analysed) and runs JIT on
-- the overview. Analysed after a handful of changed rows, their statistics follow every edit.
-- (db:migrate also analyses the whole database after it applies anything, and the demo seed after it
-- seeds: docs/operations.md.)
ALTER TABLE "endpoints" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "ceilings" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "ceiling_overrides" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "budgets" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "budget_members" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "budget_overrides" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "plans" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "plan_ceiling_values" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "plan_budget_values" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "api_keys" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "usage_sources" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "usage_source_rules" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "provider_caps" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "alert_destinations" SET (autovacuum_analyze_threshold = 5);--> statement-breakpoint
ALTER TABLE "staff" SET (autovacuum_analyze_threshold = 5);
