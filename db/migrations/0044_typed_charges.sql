-- A reservation's charges as typed values, not JSON. reserve_batch printed each reservation's
-- charges as text and the server parsed it into jsonb for every row written; settle, release, the
-- sweeper, reconciliation and the budgets' pages parsed it back, key by key, with casts. The
-- prototype's design carrying this product's row ran at 0.76-0.82 of the prototype with JSON
-- charges and 0.85-1.01 with typed ones (npm run bench:bound, same runs): the charges were the
-- costliest part of the row after its indexes.
-- One charge names its counter (limit, scope key, window start) and what the reservation holds
-- there, in the limit's measure: units (u) or calls (c) for a ceiling, micros (m) for a budget.
-- Every charge the JSON held is kept, in its order; a key it lacked stays NULL.
CREATE TYPE "reservation_charge" AS (limit_id integer, scope_key text, window_start timestamptz, measure text, amount bigint);--> statement-breakpoint
CREATE FUNCTION pg_temp.charges_of(charges jsonb) RETURNS reservation_charge[] LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(ROW((c->>'l')::int, c->>'k', (c->>'w')::timestamptz, c->>'m', (c->>'n')::bigint)::reservation_charge ORDER BY o), '{}')
  FROM jsonb_array_elements(charges) WITH ORDINALITY AS e(c, o)
$$;--> statement-breakpoint
ALTER TABLE "reservations" ALTER COLUMN "charges" SET DATA TYPE reservation_charge[] USING pg_temp.charges_of("charges");--> statement-breakpoint
DROP FUNCTION pg_temp.charges_of(jsonb);
