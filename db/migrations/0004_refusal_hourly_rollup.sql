CREATE TABLE "refusal_hourly" (
	"hour" timestamp with time zone NOT NULL,
	"endpoint_id" integer,
	"endpoint_key" text NOT NULL,
	"gate" "refusal_gate" NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "refusal_hourly_key" UNIQUE NULLS NOT DISTINCT("hour","endpoint_key","gate","endpoint_id")
);
--> statement-breakpoint
ALTER TABLE "refusal_hourly" ADD CONSTRAINT "refusal_hourly_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "refusal_hourly_hour_idx" ON "refusal_hourly" USING btree ("hour","gate","count");--> statement-breakpoint
CREATE INDEX "refusal_hourly_endpoint_hour_idx" ON "refusal_hourly" USING btree ("endpoint_id","hour","gate","count");