CREATE TYPE "public"."change_request_state" AS ENUM('pending', 'applied', 'rejected', 'stale', 'expired', 'cancelled');--> statement-breakpoint
CREATE TYPE "public"."raise_end_state" AS ENUM('active', 'reverted', 'superseded', 'cancelled');--> statement-breakpoint
CREATE TYPE "public"."schedule_action" AS ENUM('kill', 'restore', 'value');--> statement-breakpoint
CREATE TYPE "public"."schedule_repeat" AS ENUM('once', 'daily');--> statement-breakpoint
CREATE TYPE "public"."schedule_state" AS ENUM('awaiting_approval', 'scheduled', 'done', 'cancelled');--> statement-breakpoint
CREATE TABLE "change_requests" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "change_requests_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"kind" text NOT NULL,
	"endpoint_id" integer,
	"ceiling_id" integer,
	"budget_id" integer,
	"change" jsonb NOT NULL,
	"before" jsonb NOT NULL,
	"after" jsonb NOT NULL,
	"summary" text NOT NULL,
	"worst_case_before" bigint,
	"worst_case_after" bigint,
	"worst_money_before" bigint,
	"worst_money_after" bigint,
	"currency" text,
	"ends_after_seconds" integer,
	"ends_at" timestamp with time zone,
	"reason" text NOT NULL,
	"requested_by_id" integer NOT NULL,
	"requested_by" text NOT NULL,
	"requested_via" text DEFAULT 'dashboard' NOT NULL,
	"requested_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"state" "change_request_state" DEFAULT 'pending' NOT NULL,
	"break_glass" boolean DEFAULT false NOT NULL,
	"decided_by_id" integer,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	"decision_note" text,
	"acknowledged_by_id" integer,
	"acknowledged_by" text,
	"acknowledged_at" timestamp with time zone,
	CONSTRAINT "change_requests_second_person" CHECK ("change_requests"."decided_by_id" is null or "change_requests"."decided_by_id" <> "change_requests"."requested_by_id" or "change_requests"."state" = 'cancelled'),
	CONSTRAINT "change_requests_ack_second_person" CHECK ("change_requests"."acknowledged_by_id" is null or "change_requests"."acknowledged_by_id" <> "change_requests"."requested_by_id"),
	CONSTRAINT "change_requests_break_glass_applied" CHECK (not "change_requests"."break_glass" or "change_requests"."state" = 'applied'),
	CONSTRAINT "change_requests_one_end" CHECK ("change_requests"."ends_after_seconds" is null or "change_requests"."ends_at" is null),
	CONSTRAINT "change_requests_ends_after_positive" CHECK ("change_requests"."ends_after_seconds" is null or "change_requests"."ends_after_seconds" > 0)
);
--> statement-breakpoint
CREATE TABLE "raise_ends" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "raise_ends_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"request_id" integer,
	"endpoint_id" integer,
	"ceiling_id" integer,
	"budget_id" integer,
	"revert_to" bigint NOT NULL,
	"raised_to" bigint NOT NULL,
	"raised_version" integer,
	"ends_at" timestamp with time zone NOT NULL,
	"state" "raise_end_state" DEFAULT 'active' NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone,
	"resolved_note" text,
	CONSTRAINT "raise_ends_one_target" CHECK (("raise_ends"."ceiling_id" is null) <> ("raise_ends"."budget_id" is null))
);
--> statement-breakpoint
CREATE TABLE "scheduled_changes" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "scheduled_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"endpoint_id" integer NOT NULL,
	"ceiling_id" integer,
	"action" "schedule_action" NOT NULL,
	"value" bigint,
	"repeat" "schedule_repeat" DEFAULT 'once' NOT NULL,
	"run_at" timestamp with time zone NOT NULL,
	"state" "schedule_state" DEFAULT 'scheduled' NOT NULL,
	"request_id" integer,
	"reason" text NOT NULL,
	"created_by_id" integer,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"runs" integer DEFAULT 0 NOT NULL,
	"last_run_at" timestamp with time zone,
	"last_outcome" text,
	"cancelled_by" text,
	"cancelled_at" timestamp with time zone,
	CONSTRAINT "scheduled_changes_value" CHECK (("scheduled_changes"."action" = 'value') = ("scheduled_changes"."value" is not null)),
	CONSTRAINT "scheduled_changes_value_nonneg" CHECK ("scheduled_changes"."value" is null or "scheduled_changes"."value" >= 0),
	CONSTRAINT "scheduled_changes_value_on_ceiling" CHECK ("scheduled_changes"."action" <> 'value' or "scheduled_changes"."ceiling_id" is not null)
);
--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_requested_by_id_staff_id_fk" FOREIGN KEY ("requested_by_id") REFERENCES "public"."staff"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_decided_by_id_staff_id_fk" FOREIGN KEY ("decided_by_id") REFERENCES "public"."staff"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_acknowledged_by_id_staff_id_fk" FOREIGN KEY ("acknowledged_by_id") REFERENCES "public"."staff"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "raise_ends" ADD CONSTRAINT "raise_ends_request_id_change_requests_id_fk" FOREIGN KEY ("request_id") REFERENCES "public"."change_requests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "raise_ends" ADD CONSTRAINT "raise_ends_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "raise_ends" ADD CONSTRAINT "raise_ends_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "raise_ends" ADD CONSTRAINT "raise_ends_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_changes" ADD CONSTRAINT "scheduled_changes_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_changes" ADD CONSTRAINT "scheduled_changes_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_changes" ADD CONSTRAINT "scheduled_changes_request_id_change_requests_id_fk" FOREIGN KEY ("request_id") REFERENCES "public"."change_requests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scheduled_changes" ADD CONSTRAINT "scheduled_changes_created_by_id_staff_id_fk" FOREIGN KEY ("created_by_id") REFERENCES "public"."staff"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "change_requests_pending_idx" ON "change_requests" USING btree ("expires_at") WHERE "change_requests"."state" = 'pending';--> statement-breakpoint
CREATE INDEX "change_requests_endpoint_idx" ON "change_requests" USING btree ("endpoint_id","requested_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "change_requests_requested_idx" ON "change_requests" USING btree ("requested_at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "change_requests_unacknowledged_idx" ON "change_requests" USING btree ("decided_at") WHERE "change_requests"."break_glass" and "change_requests"."acknowledged_at" is null;--> statement-breakpoint
CREATE INDEX "raise_ends_due_idx" ON "raise_ends" USING btree ("ends_at") WHERE "raise_ends"."state" = 'active';--> statement-breakpoint
CREATE INDEX "raise_ends_ceiling_idx" ON "raise_ends" USING btree ("ceiling_id") WHERE "raise_ends"."state" = 'active';--> statement-breakpoint
CREATE INDEX "scheduled_changes_due_idx" ON "scheduled_changes" USING btree ("run_at") WHERE "scheduled_changes"."state" = 'scheduled';--> statement-breakpoint
CREATE INDEX "scheduled_changes_endpoint_idx" ON "scheduled_changes" USING btree ("endpoint_id","run_at");