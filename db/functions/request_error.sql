-- Guarantees: the error of one element of reserve_batch's JSON input that is not a request, or
-- NULL when it is one: a JSON object whose text fields are strings (or null), whose amount is a
-- whole JSON number and whose ttlSeconds is whole. The values themselves (amount and TTL ranges,
-- control characters, lengths) are checked by reserve_set, for every caller alike.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.request_error(r jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  field text;
BEGIN
  IF jsonb_typeof(r) IS DISTINCT FROM 'object' THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', 'each request must be a JSON object');
  END IF;
  FOREACH field IN ARRAY ARRAY['endpoint', 'caller', 'destination', 'destinationKey', 'idempotencyKey', 'requestId'] LOOP
    IF jsonb_typeof(r->field) NOT IN ('string', 'null') THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', format('%s must be a string', field));
    END IF;
  END LOOP;
  IF jsonb_typeof(r->'amount') IS DISTINCT FROM 'number' OR r->>'amount' !~ '^[0-9]{1,16}$' THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_amount',
      'message', format('amount must be a positive whole number, got %s', coalesce(r->'amount', 'null'::jsonb)));
  END IF;
  IF coalesce(r->>'ttlSeconds', '300') !~ '^[0-9]{1,5}$' THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_ttl',
      'message', 'ttlSeconds must be a whole number between 1 and 86400');
  END IF;
  RETURN NULL;
END $$;
