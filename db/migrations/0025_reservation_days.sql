CREATE TABLE "reservation_days" (
	"endpoint_id" integer NOT NULL,
	"day" date NOT NULL,
	"reservations" bigint NOT NULL,
	"settled" bigint NOT NULL,
	"released" bigint NOT NULL,
	"expired" bigint NOT NULL,
	"held" bigint NOT NULL,
	"computed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reservation_days_endpoint_id_day_pk" PRIMARY KEY("endpoint_id","day")
);
--> statement-breakpoint
ALTER TABLE "reservation_days" ADD CONSTRAINT "reservation_days_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;