ALTER TYPE "public"."actor_type" ADD VALUE 'api_key';--> statement-breakpoint
ALTER TYPE "public"."refusal_gate" ADD VALUE 'blocked';--> statement-breakpoint
CREATE TABLE "accounts" (
	"account" text PRIMARY KEY NOT NULL,
	"plan_id" integer,
	"plan_set_at" timestamp with time zone,
	"plan_set_by" text,
	"blocked_at" timestamp with time zone,
	"blocked_by" text,
	"block_reason" text,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "accounts_account_length" CHECK (char_length("accounts"."account") between 1 and 200)
);
--> statement-breakpoint
CREATE TABLE "plan_budget_values" (
	"plan_id" integer NOT NULL,
	"budget_id" integer NOT NULL,
	"value" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plan_budget_values_plan_id_budget_id_pk" PRIMARY KEY("plan_id","budget_id"),
	CONSTRAINT "plan_budget_values_nonneg" CHECK ("plan_budget_values"."value" >= 0)
);
--> statement-breakpoint
CREATE TABLE "plan_ceiling_values" (
	"plan_id" integer NOT NULL,
	"ceiling_id" integer NOT NULL,
	"value" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plan_ceiling_values_plan_id_ceiling_id_pk" PRIMARY KEY("plan_id","ceiling_id"),
	CONSTRAINT "plan_ceiling_values_nonneg" CHECK ("plan_ceiling_values"."value" >= 0)
);
--> statement-breakpoint
CREATE TABLE "plans" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "plans_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"key" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"is_default" boolean DEFAULT false NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plans_key_unique" UNIQUE("key"),
	CONSTRAINT "plans_key_format" CHECK ("plans"."key" ~ '^[a-z0-9][a-z0-9._-]{0,63}$')
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_budget_values" ADD CONSTRAINT "plan_budget_values_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_budget_values" ADD CONSTRAINT "plan_budget_values_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_ceiling_values" ADD CONSTRAINT "plan_ceiling_values_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_ceiling_values" ADD CONSTRAINT "plan_ceiling_values_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "accounts_account_prefix_idx" ON "accounts" USING btree ("account" text_pattern_ops);--> statement-breakpoint
CREATE INDEX "accounts_plan_idx" ON "accounts" USING btree ("plan_id","account") WHERE "accounts"."plan_id" is not null;--> statement-breakpoint
CREATE INDEX "accounts_blocked_idx" ON "accounts" USING btree ("blocked_at") WHERE "accounts"."blocked_at" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "plans_one_default_idx" ON "plans" USING btree ("is_default") WHERE "plans"."is_default";--> statement-breakpoint
-- The default plan sets no values: every account starts where it was before plans existed.
INSERT INTO "plans" ("key", "name", "description", "is_default") VALUES ('default', 'Default', 'Every account not assigned another plan. Sets no values: the ceilings'' and budgets'' own apply.', true);
