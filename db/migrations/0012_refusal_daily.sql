CREATE TABLE "refusal_daily" (
	"day" timestamp with time zone NOT NULL,
	"endpoint_id" integer,
	"endpoint_key" text NOT NULL,
	"gate" "refusal_gate" NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "refusal_daily_key" UNIQUE NULLS NOT DISTINCT("day","endpoint_key","gate","endpoint_id")
);
--> statement-breakpoint
ALTER TABLE "refusal_daily" ADD CONSTRAINT "refusal_daily_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "refusal_daily_day_idx" ON "refusal_daily" USING btree ("day","gate","count");--> statement-breakpoint
CREATE INDEX "refusal_daily_endpoint_day_idx" ON "refusal_daily" USING btree ("endpoint_id","day","gate","count");