CREATE TYPE "public"."provider_cap_measure" AS ENUM('units', 'money');--> statement-breakpoint
CREATE TYPE "public"."provider_cap_window" AS ENUM('day', 'month');--> statement-breakpoint
CREATE TYPE "public"."usage_source_kind" AS ENUM('openai', 'anthropic', 'twilio', 'file');--> statement-breakpoint
CREATE TABLE "provider_caps" (
	"endpoint_id" integer PRIMARY KEY NOT NULL,
	"measure" "provider_cap_measure" NOT NULL,
	"window" "provider_cap_window" NOT NULL,
	"amount" bigint NOT NULL,
	"set_at" text NOT NULL,
	"recorded_by" text NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "provider_caps_amount_positive" CHECK ("provider_caps"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "reconciliation_days" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "reconciliation_days_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"endpoint_id" integer,
	"budget_id" integer,
	"source_id" integer NOT NULL,
	"day" date NOT NULL,
	"day_start" timestamp with time zone NOT NULL,
	"day_end" timestamp with time zone NOT NULL,
	"billed_units" bigint NOT NULL,
	"billed_micros" bigint NOT NULL,
	"billed_money" text NOT NULL,
	"charged_units" bigint NOT NULL,
	"charged_micros" bigint NOT NULL,
	"held_reservations" integer DEFAULT 0 NOT NULL,
	"computed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reconciliation_days_one_target" CHECK (("reconciliation_days"."endpoint_id" is null) <> ("reconciliation_days"."budget_id" is null)),
	CONSTRAINT "reconciliation_days_billed_money" CHECK ("reconciliation_days"."billed_money" in ('reported', 'priced'))
);
--> statement-breakpoint
CREATE TABLE "usage_pulls" (
	"source_id" integer NOT NULL,
	"day" date NOT NULL,
	"pulled_at" timestamp with time zone DEFAULT now() NOT NULL,
	"via" text NOT NULL,
	"rows" integer NOT NULL,
	"unmapped_rows" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_pulls_source_id_day_pk" PRIMARY KEY("source_id","day")
);
--> statement-breakpoint
CREATE TABLE "usage_rows" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "usage_rows_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"source_id" integer NOT NULL,
	"day" date NOT NULL,
	"item" text NOT NULL,
	"units" bigint DEFAULT 0 NOT NULL,
	"cost_micros" bigint,
	"endpoint_id" integer,
	"budget_id" integer,
	"part" text,
	"raw" jsonb NOT NULL,
	CONSTRAINT "usage_rows_units_nonneg" CHECK ("usage_rows"."units" >= 0)
);
--> statement-breakpoint
CREATE TABLE "usage_source_rules" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "usage_source_rules_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"source_id" integer NOT NULL,
	"match" text NOT NULL,
	"endpoint_id" integer,
	"budget_id" integer,
	"part" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "usage_source_rules_one_target" CHECK (("usage_source_rules"."endpoint_id" is null) <> ("usage_source_rules"."budget_id" is null))
);
--> statement-breakpoint
CREATE TABLE "usage_sources" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "usage_sources_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"kind" "usage_source_kind" NOT NULL,
	"location" text,
	"credential_ref" text,
	"account" text,
	"time_zone" text DEFAULT 'UTC' NOT NULL,
	"currency" text DEFAULT 'USD' NOT NULL,
	"lookback_days" integer DEFAULT 3 NOT NULL,
	"threshold_basis_points" integer DEFAULT 200 NOT NULL,
	"threshold_micros" bigint DEFAULT 1000000 NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"pull_requested_at" timestamp with time zone,
	"pulling_until" timestamp with time zone,
	"last_pull_at" timestamp with time zone,
	"last_pull_ok_at" timestamp with time zone,
	"last_pull_error" text,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "usage_sources_name_unique" UNIQUE("name"),
	CONSTRAINT "usage_sources_lookback" CHECK ("usage_sources"."lookback_days" between 1 and 35),
	CONSTRAINT "usage_sources_threshold" CHECK ("usage_sources"."threshold_basis_points" between 0 and 10000 and "usage_sources"."threshold_micros" >= 0)
);
--> statement-breakpoint
ALTER TABLE "provider_caps" ADD CONSTRAINT "provider_caps_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reconciliation_days" ADD CONSTRAINT "reconciliation_days_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reconciliation_days" ADD CONSTRAINT "reconciliation_days_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reconciliation_days" ADD CONSTRAINT "reconciliation_days_source_id_usage_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."usage_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_pulls" ADD CONSTRAINT "usage_pulls_source_id_usage_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."usage_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rows" ADD CONSTRAINT "usage_rows_source_id_usage_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."usage_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rows" ADD CONSTRAINT "usage_rows_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rows" ADD CONSTRAINT "usage_rows_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_source_rules" ADD CONSTRAINT "usage_source_rules_source_id_usage_sources_id_fk" FOREIGN KEY ("source_id") REFERENCES "public"."usage_sources"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_source_rules" ADD CONSTRAINT "usage_source_rules_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_source_rules" ADD CONSTRAINT "usage_source_rules_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "reconciliation_days_endpoint_idx" ON "reconciliation_days" USING btree ("endpoint_id","day") WHERE "reconciliation_days"."endpoint_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "reconciliation_days_budget_idx" ON "reconciliation_days" USING btree ("budget_id","day") WHERE "reconciliation_days"."budget_id" is not null;--> statement-breakpoint
CREATE INDEX "reconciliation_days_day_idx" ON "reconciliation_days" USING btree ("day");--> statement-breakpoint
CREATE INDEX "usage_rows_source_day_idx" ON "usage_rows" USING btree ("source_id","day");--> statement-breakpoint
CREATE INDEX "usage_rows_endpoint_day_idx" ON "usage_rows" USING btree ("endpoint_id","day") WHERE "usage_rows"."endpoint_id" is not null;--> statement-breakpoint
CREATE INDEX "usage_rows_budget_day_idx" ON "usage_rows" USING btree ("budget_id","day") WHERE "usage_rows"."budget_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "usage_source_rules_match_idx" ON "usage_source_rules" USING btree ("source_id","match");