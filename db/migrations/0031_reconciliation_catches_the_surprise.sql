ALTER TYPE "public"."usage_source_kind" ADD VALUE 'sendgrid';--> statement-breakpoint
ALTER TYPE "public"."usage_source_kind" ADD VALUE 'postmark';--> statement-breakpoint
ALTER TYPE "public"."usage_source_kind" ADD VALUE 'ses';--> statement-breakpoint
ALTER TABLE "usage_rows" ADD COLUMN "field" text;--> statement-breakpoint
ALTER TABLE "usage_rows" ADD COLUMN "unit" text;--> statement-breakpoint
ALTER TABLE "usage_rows" ADD COLUMN "rollup" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_source_rules" ADD COLUMN "field_parts" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_sources" ADD COLUMN "unmapped_threshold_micros" bigint DEFAULT 1000000 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_sources" ADD COLUMN "pull_at" time DEFAULT '06:00' NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_sources" ADD CONSTRAINT "usage_sources_unmapped_threshold" CHECK ("usage_sources"."unmapped_threshold_micros" >= 0);