CREATE TABLE "caller_totals" (
	"ceiling_id" integer NOT NULL,
	"scope_key" text NOT NULL,
	"settled" bigint NOT NULL,
	CONSTRAINT "caller_totals_ceiling_id_scope_key_pk" PRIMARY KEY("ceiling_id","scope_key")
);
--> statement-breakpoint
CREATE TABLE "caller_totals_state" (
	"ceiling_id" integer PRIMARY KEY NOT NULL,
	"from_start" timestamp with time zone NOT NULL,
	"through_start" timestamp with time zone NOT NULL,
	"built_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "caller_totals" ADD CONSTRAINT "caller_totals_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "caller_totals_state" ADD CONSTRAINT "caller_totals_state_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "caller_totals_rank_idx" ON "caller_totals" USING btree ("ceiling_id","settled" DESC NULLS LAST,"scope_key");