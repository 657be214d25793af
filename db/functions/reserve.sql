-- One reservation, for SQL callers: the same batch function with a batch of one. An endpoint with
-- several priced parts takes parts ('{"input": 1200, "output": 800}') and a NULL amount.
-- Guarantees and lock order: those of reserve_batch.
CREATE OR REPLACE FUNCTION ceilings.reserve(
  endpoint text, amount bigint, caller text DEFAULT NULL, destination text DEFAULT NULL,
  idempotency_key text DEFAULT NULL, ttl_seconds int DEFAULT 300, destination_key text DEFAULT NULL,
  parts jsonb DEFAULT NULL
) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ceilings.reserve_batch(jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
    'endpoint', endpoint, 'amount', amount, 'caller', caller, 'destination', destination,
    'destinationKey', destination_key, 'idempotencyKey', idempotency_key, 'ttlSeconds', ttl_seconds, 'parts', parts)))) -> 0
$$;
