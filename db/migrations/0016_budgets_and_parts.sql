CREATE TYPE "public"."budget_scope" AS ENUM('global', 'account');--> statement-breakpoint
ALTER TYPE "public"."refusal_gate" ADD VALUE 'budget';--> statement-breakpoint
CREATE TABLE "budget_members" (
	"budget_id" integer NOT NULL,
	"endpoint_id" integer NOT NULL,
	CONSTRAINT "budget_members_budget_id_endpoint_id_pk" PRIMARY KEY("budget_id","endpoint_id")
);
--> statement-breakpoint
CREATE TABLE "budget_overrides" (
	"budget_id" integer NOT NULL,
	"caller" text NOT NULL,
	"value" bigint NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budget_overrides_budget_id_caller_pk" PRIMARY KEY("budget_id","caller"),
	CONSTRAINT "budget_overrides_value_nonneg" CHECK ("budget_overrides"."value" >= 0)
);
--> statement-breakpoint
CREATE TABLE "budget_usage" (
	"budget_id" integer NOT NULL,
	"scope_key" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"held" bigint DEFAULT 0 NOT NULL,
	"settled" bigint DEFAULT 0 NOT NULL,
	"reservations" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "budget_usage_budget_id_scope_key_window_start_pk" PRIMARY KEY("budget_id","scope_key","window_start"),
	CONSTRAINT "budget_usage_held_nonneg" CHECK ("budget_usage"."held" >= 0),
	CONSTRAINT "budget_usage_settled_nonneg" CHECK ("budget_usage"."settled" >= 0)
);
--> statement-breakpoint
CREATE TABLE "budgets" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "budgets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"key" text NOT NULL,
	"name" text NOT NULL,
	"currency" text DEFAULT 'USD' NOT NULL,
	"scope" "budget_scope" NOT NULL,
	"window" "ceiling_window" NOT NULL,
	"billing_day" smallint DEFAULT 1 NOT NULL,
	"value" bigint NOT NULL,
	"value_before_kill" bigint,
	"min_value" bigint DEFAULT 0 NOT NULL,
	"max_value" bigint NOT NULL,
	"default_value" bigint NOT NULL,
	"alert_thresholds" smallint[] DEFAULT '{50,80,100}'::smallint[] NOT NULL,
	"killed_at" timestamp with time zone,
	"killed_by" text,
	"archived_at" timestamp with time zone,
	"archived_by" text,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budgets_key_unique" UNIQUE("key"),
	CONSTRAINT "budgets_key_format" CHECK ("budgets"."key" ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
	CONSTRAINT "budgets_window" CHECK ("budgets"."window" in ('utc_day', 'billing_month')),
	CONSTRAINT "budgets_billing_day_range" CHECK ("budgets"."billing_day" between 1 and 28),
	CONSTRAINT "budgets_value_nonneg" CHECK ("budgets"."value" >= 0),
	CONSTRAINT "budgets_bounds_ordered" CHECK (0 <= "budgets"."min_value" and "budgets"."min_value" <= "budgets"."max_value"),
	CONSTRAINT "budgets_value_in_bounds" CHECK ("budgets"."value" = 0 or "budgets"."value" between "budgets"."min_value" and "budgets"."max_value"),
	CONSTRAINT "budgets_default_in_bounds" CHECK ("budgets"."default_value" between "budgets"."min_value" and "budgets"."max_value")
);
--> statement-breakpoint
ALTER TABLE "endpoints" DROP CONSTRAINT "endpoints_unit_price_nonneg";--> statement-breakpoint
ALTER TABLE "alerts" ADD COLUMN "budget_id" integer;--> statement-breakpoint
ALTER TABLE "endpoints" ADD COLUMN "parts" jsonb DEFAULT '[{"name":"units","pricePico":0}]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "refusals" ADD COLUMN "budget_id" integer;--> statement-breakpoint
ALTER TABLE "reservations" ADD COLUMN "parts" jsonb;--> statement-breakpoint
ALTER TABLE "reservations" ADD COLUMN "money" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "reservations" ADD COLUMN "prices" jsonb;--> statement-breakpoint
ALTER TABLE "reservations" ADD COLUMN "settled_parts" jsonb;--> statement-breakpoint
ALTER TABLE "reservations" ADD COLUMN "settled_money" bigint;--> statement-breakpoint
ALTER TABLE "budget_members" ADD CONSTRAINT "budget_members_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "budget_members" ADD CONSTRAINT "budget_members_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "budget_overrides" ADD CONSTRAINT "budget_overrides_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "budget_usage" ADD CONSTRAINT "budget_usage_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "budget_members_endpoint_idx" ON "budget_members" USING btree ("endpoint_id");--> statement-breakpoint
CREATE INDEX "budget_usage_window_idx" ON "budget_usage" USING btree ("budget_id","window_start","settled");--> statement-breakpoint
ALTER TABLE "refusals" ADD CONSTRAINT "refusals_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoints" ADD CONSTRAINT "endpoints_parts_list" CHECK (jsonb_typeof("endpoints"."parts") = 'array' and jsonb_array_length("endpoints"."parts") between 1 and 8);