CREATE TYPE "public"."destination_kind" AS ENUM('email', 'phone', 'other');--> statement-breakpoint
ALTER TYPE "public"."actor_type" ADD VALUE 'config';--> statement-breakpoint
ALTER TABLE "ceilings" ADD COLUMN "destination_kind" "destination_kind";--> statement-breakpoint
ALTER TABLE "endpoints" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "endpoints" ADD COLUMN "archived_by" text;--> statement-breakpoint
ALTER TABLE "endpoints" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "ceilings" ADD CONSTRAINT "ceilings_destination_kind_scope" CHECK ("ceilings"."destination_kind" is null or "ceilings"."scope" = 'destination');