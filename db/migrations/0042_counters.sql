-- One limit model, third step: the counters of ceilings (usage) and of budgets (budget_usage) move,
-- row for row, into one table keyed by the limit, held and settled in the limit's measure (units or
-- calls for a ceiling, micros for a budget). Every reservation's charge records name the limit too:
-- {l: limit id, k: scope key, w: window start, n: what it holds, m: u (units) | c (calls) | m (micros)},
-- where they named a ceiling ({c, ..., m}) or a budget ({b, ...}). The old names stay as read-only
-- views, the counters of one kind named by its ceiling or budget, for the dashboard's readers.
CREATE TABLE "counters" (
	"limit_id" integer NOT NULL,
	"scope_key" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"held" bigint DEFAULT 0 NOT NULL,
	"settled" bigint DEFAULT 0 NOT NULL,
	"reservations" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "counters_limit_id_scope_key_window_start_pk" PRIMARY KEY("limit_id","scope_key","window_start"),
	CONSTRAINT "counters_held_nonneg" CHECK ("counters"."held" >= 0),
	CONSTRAINT "counters_settled_nonneg" CHECK ("counters"."settled" >= 0)
);
--> statement-breakpoint
INSERT INTO "counters" ("limit_id", "scope_key", "window_start", "window_end", "held", "settled", "reservations")
  SELECT c."limit_id", u."scope_key", u."window_start", u."window_end", u."held", u."settled", u."reservations"
  FROM "usage" u JOIN "ceilings" c ON c."id" = u."ceiling_id"
  UNION ALL
  SELECT b."limit_id", u."scope_key", u."window_start", u."window_end", u."held", u."settled", u."reservations"
  FROM "budget_usage" u JOIN "budgets" b ON b."id" = u."budget_id";--> statement-breakpoint
-- A charge of a ceiling or budget deleted since names no limit (l null): its counter went with it,
-- and a resolution finds nothing to update, as it did before.
UPDATE "reservations" r SET "charges" = (
  SELECT coalesce(jsonb_agg(jsonb_build_object('l', coalesce(c."limit_id", b."limit_id"), 'k', ch->'k', 'w', ch->'w', 'n', ch->'n',
                                               'm', CASE WHEN ch ? 'b' THEN 'm' ELSE ch->>'m' END) ORDER BY x.o), '[]'::jsonb)
  FROM jsonb_array_elements(r."charges") WITH ORDINALITY AS x(ch, o)
  LEFT JOIN "ceilings" c ON ch ? 'c' AND c."id" = (ch->>'c')::int
  LEFT JOIN "budgets" b ON ch ? 'b' AND b."id" = (ch->>'b')::int)
WHERE r."charges" <> '[]'::jsonb;--> statement-breakpoint
DROP TABLE "budget_usage";--> statement-breakpoint
DROP TABLE "usage";--> statement-breakpoint
ALTER TABLE "counters" ADD CONSTRAINT "counters_limit_id_limits_id_fk" FOREIGN KEY ("limit_id") REFERENCES "public"."limits"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "counters_window_idx" ON "counters" USING btree ("window_start");--> statement-breakpoint
CREATE INDEX "counters_limit_window_settled_idx" ON "counters" USING btree ("limit_id","window_start","settled");--> statement-breakpoint
CREATE VIEW "usage" AS
  SELECT c."id" AS "ceiling_id", k."limit_id", k."scope_key", k."window_start", k."window_end", k."held", k."settled", k."reservations"
  FROM "counters" k JOIN "ceilings" c ON c."limit_id" = k."limit_id";--> statement-breakpoint
CREATE VIEW "budget_usage" AS
  SELECT b."id" AS "budget_id", k."limit_id", k."scope_key", k."window_start", k."window_end", k."held", k."settled", k."reservations"
  FROM "counters" k JOIN "budgets" b ON b."limit_id" = k."limit_id";
