-- One reservation, for SQL callers: the same batch function with a batch of one. An endpoint with
-- several priced parts takes parts ('{"input": 1200, "output": 800}') and a NULL amount.
-- Its values are typed already, so it calls the typed entry (reserve_batch_arrays) and no JSON is
-- built or read for them; parts are taken as the JSON entry takes them (a JSON null is none, and a
-- part of null is not sent).
-- Guarantees and lock order: those of reserve_batch.
CREATE OR REPLACE FUNCTION ceilings.reserve(
  endpoint text, amount bigint, caller text DEFAULT NULL, destination text DEFAULT NULL,
  idempotency_key text DEFAULT NULL, ttl_seconds int DEFAULT 300, destination_key text DEFAULT NULL,
  parts jsonb DEFAULT NULL
) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ceilings.reserve_batch_arrays(ARRAY[endpoint], ARRAY[amount], ARRAY[caller], ARRAY[destination], ARRAY[destination_key],
    ARRAY[idempotency_key], ARRAY[ttl_seconds], NULL, ARRAY[nullif(jsonb_strip_nulls(parts), 'null'::jsonb)]) -> 0
$$;
