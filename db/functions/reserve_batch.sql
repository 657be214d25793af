-- Guarantees: reserve_batch_arrays's decisions and answers for a batch written as JSON, the entry a
-- service in any language calls: [{endpoint, amount | parts, caller?, destination?, destinationKey?,
-- idempotencyKey?, ttlSeconds?, requestId?}], one answer per request in order. Each request is
-- checked as JSON first (request_error: an object, strings where text goes, an amount that is a
-- whole number), and a request that fails is answered with that error and charges nothing.
-- Locks: reserve_batch_arrays's.
CREATE OR REPLACE FUNCTION ceilings.reserve_batch(requests jsonb, compact boolean DEFAULT false) RETURNS jsonb
LANGUAGE plpgsql SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  IF jsonb_typeof(requests) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'reserve_batch expects a JSON array' USING ERRCODE = '22023';
  END IF;
  -- Each request checked as JSON (request_error), then its fields as typed values. An endpoint and a
  -- caller written as strings are passed even with an input error, as they always were read: the
  -- endpoint's lock is taken and a new caller registered.
  RETURN (
    WITH q AS (SELECT t.r, ceilings.request_error(t.r) AS error FROM jsonb_array_elements(requests) WITH ORDINALITY AS t(r, o) ORDER BY t.o)
    SELECT ceilings.reserve_batch_arrays(
      coalesce(array_agg(CASE WHEN jsonb_typeof(q.r->'endpoint') = 'string' THEN q.r->>'endpoint' END), '{}'),
      array_agg(CASE WHEN q.error IS NULL THEN (q.r->>'amount')::bigint END),
      array_agg(CASE WHEN jsonb_typeof(q.r->'caller') = 'string' THEN q.r->>'caller' END),
      array_agg(CASE WHEN q.error IS NULL THEN q.r->>'destination' END),
      array_agg(CASE WHEN q.error IS NULL THEN q.r->>'destinationKey' END),
      array_agg(CASE WHEN q.error IS NULL THEN q.r->>'idempotencyKey' END),
      array_agg(CASE WHEN q.error IS NULL THEN (q.r->>'ttlSeconds')::int END),
      array_agg(CASE WHEN q.error IS NULL THEN q.r->>'requestId' END),
      array_agg(CASE WHEN q.error IS NULL THEN nullif(q.r->'parts', 'null'::jsonb) END),
      compact,
      array_agg(q.error))
    FROM q);
END $$;
