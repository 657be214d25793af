-- An override may end by itself (expires_at, the database clock): one column for both kinds of limit.
ALTER TABLE "limit_overrides" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "limit_overrides_expires_idx" ON "limit_overrides" USING btree ("expires_at") WHERE "limit_overrides"."expires_at" is not null;