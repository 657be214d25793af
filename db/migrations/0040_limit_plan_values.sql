-- One limit model, second step: a plan's values on per-caller ceilings and per-account budgets
-- move, row for row, into one table keyed by the limit (plan_limit_values).
CREATE TABLE "plan_limit_values" (
	"plan_id" integer NOT NULL,
	"limit_id" integer NOT NULL,
	"value" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plan_limit_values_plan_id_limit_id_pk" PRIMARY KEY("plan_id","limit_id"),
	CONSTRAINT "plan_limit_values_nonneg" CHECK ("plan_limit_values"."value" >= 0)
);
--> statement-breakpoint
INSERT INTO "plan_limit_values" ("plan_id", "limit_id", "value", "created_at", "updated_at")
  SELECT v."plan_id", c."limit_id", v."value", v."created_at", v."updated_at"
  FROM "plan_ceiling_values" v JOIN "ceilings" c ON c."id" = v."ceiling_id"
  UNION ALL
  SELECT v."plan_id", b."limit_id", v."value", v."created_at", v."updated_at"
  FROM "plan_budget_values" v JOIN "budgets" b ON b."id" = v."budget_id";--> statement-breakpoint
DROP TABLE "plan_budget_values" CASCADE;--> statement-breakpoint
DROP TABLE "plan_ceiling_values" CASCADE;--> statement-breakpoint
ALTER TABLE "plan_limit_values" ADD CONSTRAINT "plan_limit_values_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_limit_values" ADD CONSTRAINT "plan_limit_values_limit_id_limits_id_fk" FOREIGN KEY ("limit_id") REFERENCES "public"."limits"("id") ON DELETE cascade ON UPDATE no action;