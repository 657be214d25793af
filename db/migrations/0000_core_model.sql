CREATE TYPE "public"."delivery_state" AS ENUM('pending', 'delivered', 'failed');--> statement-breakpoint
CREATE TYPE "public"."alert_destination_kind" AS ENUM('slack', 'webhook', 'email');--> statement-breakpoint
CREATE TYPE "public"."actor_type" AS ENUM('staff', 'cli', 'system');--> statement-breakpoint
CREATE TYPE "public"."ceiling_metric" AS ENUM('units', 'calls');--> statement-breakpoint
CREATE TYPE "public"."ceiling_scope" AS ENUM('global', 'caller', 'destination');--> statement-breakpoint
CREATE TYPE "public"."ceiling_window" AS ENUM('utc_day', 'billing_month', 'first_hit');--> statement-breakpoint
CREATE TYPE "public"."refusal_gate" AS ENUM('kill_switch', 'per_call_max', 'ceiling', 'cooldown', 'throttle', 'unavailable');--> statement-breakpoint
CREATE TYPE "public"."reservation_state" AS ENUM('held', 'settled', 'released', 'expired');--> statement-breakpoint
CREATE TYPE "public"."staff_role" AS ENUM('viewer', 'operator', 'admin');--> statement-breakpoint
CREATE TABLE "alert_deliveries" (
	"alert_id" integer NOT NULL,
	"destination_id" integer NOT NULL,
	"state" "delivery_state" DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"delivered_at" timestamp with time zone,
	CONSTRAINT "alert_deliveries_alert_id_destination_id_pk" PRIMARY KEY("alert_id","destination_id")
);
--> statement-breakpoint
CREATE TABLE "alert_destinations" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "alert_destinations_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"kind" "alert_destination_kind" NOT NULL,
	"target" text NOT NULL,
	"signing_secret" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "alerts" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "alerts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"kind" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"endpoint_id" integer,
	"ceiling_id" integer,
	"window_start" timestamp with time zone,
	"message" text NOT NULL,
	"details" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"acknowledged_at" timestamp with time zone,
	"acknowledged_by" text,
	CONSTRAINT "alerts_dedupe_key_unique" UNIQUE("dedupe_key")
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "api_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"secret_hash" text NOT NULL,
	"account" text,
	"trusted" boolean DEFAULT false NOT NULL,
	"endpoint_keys" text[] NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"revoked_at" timestamp with time zone,
	"last_used_at" timestamp with time zone,
	CONSTRAINT "api_keys_secret_hash_unique" UNIQUE("secret_hash"),
	CONSTRAINT "api_keys_account_or_trusted" CHECK ("api_keys"."trusted" or "api_keys"."account" is not null)
);
--> statement-breakpoint
CREATE TABLE "audit_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor_type" "actor_type" NOT NULL,
	"actor" text NOT NULL,
	"action" text NOT NULL,
	"endpoint_id" integer,
	"endpoint_key" text,
	"ceiling_id" integer,
	"target" text,
	"raw_input" text,
	"previous_value" bigint,
	"applied_value" bigint,
	"clamped" boolean,
	"reason" text,
	"details" jsonb
);
--> statement-breakpoint
CREATE TABLE "ceiling_overrides" (
	"ceiling_id" integer NOT NULL,
	"caller" text NOT NULL,
	"value" bigint NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ceiling_overrides_ceiling_id_caller_pk" PRIMARY KEY("ceiling_id","caller"),
	CONSTRAINT "ceiling_overrides_value_nonneg" CHECK ("ceiling_overrides"."value" >= 0)
);
--> statement-breakpoint
CREATE TABLE "ceilings" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "ceilings_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"endpoint_id" integer NOT NULL,
	"metric" "ceiling_metric" NOT NULL,
	"scope" "ceiling_scope" NOT NULL,
	"window" "ceiling_window" NOT NULL,
	"window_seconds" integer,
	"value" bigint NOT NULL,
	"value_before_kill" bigint,
	"min_value" bigint DEFAULT 0 NOT NULL,
	"max_value" bigint NOT NULL,
	"default_value" bigint NOT NULL,
	"alert_thresholds" smallint[] DEFAULT '{50,80,100}'::smallint[] NOT NULL,
	"killed_at" timestamp with time zone,
	"killed_by" text,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ceilings_value_nonneg" CHECK ("ceilings"."value" >= 0),
	CONSTRAINT "ceilings_bounds_ordered" CHECK (0 <= "ceilings"."min_value" and "ceilings"."min_value" <= "ceilings"."max_value"),
	CONSTRAINT "ceilings_value_in_bounds" CHECK ("ceilings"."value" = 0 or "ceilings"."value" between "ceilings"."min_value" and "ceilings"."max_value"),
	CONSTRAINT "ceilings_default_in_bounds" CHECK ("ceilings"."default_value" between "ceilings"."min_value" and "ceilings"."max_value"),
	CONSTRAINT "ceilings_window_seconds" CHECK (("ceilings"."window" = 'first_hit') = ("ceilings"."window_seconds" is not null and "ceilings"."window_seconds" > 0)),
	CONSTRAINT "ceilings_cooldown_scope" CHECK ("ceilings"."window" <> 'first_hit' or "ceilings"."scope" = 'destination')
);
--> statement-breakpoint
CREATE TABLE "endpoints" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "endpoints_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"key" text NOT NULL,
	"name" text NOT NULL,
	"unit" text NOT NULL,
	"unit_price_micros" bigint DEFAULT 0 NOT NULL,
	"currency" text DEFAULT 'USD' NOT NULL,
	"per_call_max" bigint NOT NULL,
	"plan_allowance" bigint,
	"billing_day" smallint DEFAULT 1 NOT NULL,
	"throttle_per_minute" integer,
	"throttle_fail_open" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "endpoints_key_unique" UNIQUE("key"),
	CONSTRAINT "endpoints_key_format" CHECK ("endpoints"."key" ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
	CONSTRAINT "endpoints_per_call_max_positive" CHECK ("endpoints"."per_call_max" > 0),
	CONSTRAINT "endpoints_billing_day_range" CHECK ("endpoints"."billing_day" between 1 and 28),
	CONSTRAINT "endpoints_plan_allowance_nonneg" CHECK ("endpoints"."plan_allowance" is null or "endpoints"."plan_allowance" >= 0),
	CONSTRAINT "endpoints_unit_price_nonneg" CHECK ("endpoints"."unit_price_micros" >= 0)
);
--> statement-breakpoint
CREATE TABLE "refusals" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "refusals_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_at" timestamp with time zone DEFAULT now() NOT NULL,
	"bucket" timestamp with time zone NOT NULL,
	"endpoint_id" integer,
	"endpoint_key" text NOT NULL,
	"ceiling_id" integer,
	"gate" "refusal_gate" NOT NULL,
	"caller" text DEFAULT '' NOT NULL,
	"destination" text DEFAULT '' NOT NULL,
	"amount" bigint NOT NULL,
	"remaining" bigint,
	"count" integer DEFAULT 1 NOT NULL,
	"request_id" text,
	"detail" text
);
--> statement-breakpoint
CREATE TABLE "reservations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"endpoint_id" integer NOT NULL,
	"caller" text DEFAULT '' NOT NULL,
	"destination" text,
	"destination_key" text,
	"amount" bigint NOT NULL,
	"settled_amount" bigint,
	"state" "reservation_state" DEFAULT 'held' NOT NULL,
	"overrun" boolean DEFAULT false NOT NULL,
	"idempotency_key" text,
	"charges" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"resolved_at" timestamp with time zone,
	CONSTRAINT "reservations_amount_positive" CHECK ("reservations"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "sign_in_failures" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"first_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "staff" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "staff_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"email" text NOT NULL,
	"name" text DEFAULT '' NOT NULL,
	"password_hash" text NOT NULL,
	"role" "staff_role" NOT NULL,
	"disabled_at" timestamp with time zone,
	"session_version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "staff_email_unique" UNIQUE("email")
);
--> statement-breakpoint
CREATE TABLE "throttle_counters" (
	"endpoint_id" integer NOT NULL,
	"caller" text NOT NULL,
	"minute" timestamp with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "throttle_counters_endpoint_id_caller_minute_pk" PRIMARY KEY("endpoint_id","caller","minute")
);
--> statement-breakpoint
CREATE TABLE "usage" (
	"ceiling_id" integer NOT NULL,
	"scope_key" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"held" bigint DEFAULT 0 NOT NULL,
	"settled" bigint DEFAULT 0 NOT NULL,
	"reservations" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "usage_ceiling_id_scope_key_window_start_pk" PRIMARY KEY("ceiling_id","scope_key","window_start"),
	CONSTRAINT "usage_held_nonneg" CHECK ("usage"."held" >= 0),
	CONSTRAINT "usage_settled_nonneg" CHECK ("usage"."settled" >= 0)
);
--> statement-breakpoint
CREATE TABLE "worker_heartbeats" (
	"name" text PRIMARY KEY NOT NULL,
	"beat_at" timestamp with time zone DEFAULT now() NOT NULL,
	"detail" text
);
--> statement-breakpoint
ALTER TABLE "alert_deliveries" ADD CONSTRAINT "alert_deliveries_alert_id_alerts_id_fk" FOREIGN KEY ("alert_id") REFERENCES "public"."alerts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_deliveries" ADD CONSTRAINT "alert_deliveries_destination_id_alert_destinations_id_fk" FOREIGN KEY ("destination_id") REFERENCES "public"."alert_destinations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ceiling_overrides" ADD CONSTRAINT "ceiling_overrides_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ceilings" ADD CONSTRAINT "ceilings_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refusals" ADD CONSTRAINT "refusals_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refusals" ADD CONSTRAINT "refusals_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reservations" ADD CONSTRAINT "reservations_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage" ADD CONSTRAINT "usage_ceiling_id_ceilings_id_fk" FOREIGN KEY ("ceiling_id") REFERENCES "public"."ceilings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_deliveries_due_idx" ON "alert_deliveries" USING btree ("next_attempt_at") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "alerts_created_idx" ON "alerts" USING btree ("created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_events_at_idx" ON "audit_events" USING btree ("at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_events_endpoint_idx" ON "audit_events" USING btree ("endpoint_id","at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "audit_events_action_idx" ON "audit_events" USING btree ("action","at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "ceilings_endpoint_idx" ON "ceilings" USING btree ("endpoint_id");--> statement-breakpoint
CREATE UNIQUE INDEX "refusals_dedupe_idx" ON "refusals" USING btree ("endpoint_key","gate","caller","destination","bucket");--> statement-breakpoint
CREATE INDEX "refusals_at_idx" ON "refusals" USING btree ("at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "refusals_endpoint_at_idx" ON "refusals" USING btree ("endpoint_id","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "refusals_gate_at_idx" ON "refusals" USING btree ("gate","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "refusals_caller_at_idx" ON "refusals" USING btree ("caller","at" DESC NULLS LAST,"id" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "refusals_destination_idx" ON "refusals" USING btree ("destination" text_pattern_ops,"at" DESC NULLS LAST);--> statement-breakpoint
CREATE UNIQUE INDEX "reservations_idempotency_idx" ON "reservations" USING btree ("endpoint_id","caller","idempotency_key") WHERE "reservations"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "reservations_held_expiry_idx" ON "reservations" USING btree ("expires_at") WHERE "reservations"."state" = 'held';--> statement-breakpoint
CREATE INDEX "reservations_endpoint_created_idx" ON "reservations" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE INDEX "usage_window_idx" ON "usage" USING btree ("window_start");