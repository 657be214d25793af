CREATE TABLE "what_if_days" (
	"endpoint_id" integer NOT NULL,
	"day" date NOT NULL,
	"grants" integer NOT NULL,
	"through" timestamp (6) with time zone NOT NULL,
	"at" "bytea" NOT NULL,
	"amount" "bytea" NOT NULL,
	"money" "bytea" NOT NULL,
	"final_units" "bytea" NOT NULL,
	"final_money" "bytea" NOT NULL,
	"free" "bytea" NOT NULL,
	"caller" "bytea" NOT NULL,
	"destination" "bytea" NOT NULL,
	"callers" text[] NOT NULL,
	"destinations" text[] NOT NULL,
	"built_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "what_if_days_endpoint_id_day_pk" PRIMARY KEY("endpoint_id","day")
);
--> statement-breakpoint
ALTER TABLE "what_if_days" ADD CONSTRAINT "what_if_days_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;