DROP INDEX "refusals_at_idx";--> statement-breakpoint
CREATE INDEX "refusals_at_idx" ON "refusals" USING btree ("at" DESC NULLS LAST,"id" DESC NULLS LAST,"gate","count");