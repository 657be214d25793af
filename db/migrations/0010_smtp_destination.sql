-- Old e-mail rows (the kind existed without SMTP settings, never deliverable) are not checked: NOT VALID.
CREATE TYPE "public"."smtp_tls_mode" AS ENUM('tls', 'starttls', 'none');--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD COLUMN "smtp_host" text;--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD COLUMN "smtp_port" integer;--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD COLUMN "smtp_tls" "smtp_tls_mode";--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD COLUMN "smtp_username" text;--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD COLUMN "smtp_password_ref" text;--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD COLUMN "email_from" text;--> statement-breakpoint
ALTER TABLE "alert_destinations" ADD CONSTRAINT "alert_destinations_email_smtp" CHECK ("alert_destinations"."kind" <> 'email' or ("alert_destinations"."smtp_host" is not null and "alert_destinations"."smtp_port" is not null and "alert_destinations"."smtp_tls" is not null and "alert_destinations"."email_from" is not null)) NOT VALID;