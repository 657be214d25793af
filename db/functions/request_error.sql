-- Guarantees: the input error of one reservation request, or NULL when the database can take it:
-- a JSON object whose text fields are strings, then its values (input_error). Checked per request, so a bad request is an error for itself alone and never
-- makes the batch raise.
-- Locks: none.
-- One SQL expression, not PL/pgSQL, and STABLE as format() and jsonb_build_object() are (an
-- IMMUTABLE one would not be inlined): the planner inlines it into reserve_batch's statement, where it
-- runs per request with no function call and nothing set up again in each transaction (the
-- PL/pgSQL version's expressions were compiled anew in every batch). The checks run in this order;
-- the first that fails answers.
CREATE OR REPLACE FUNCTION ceilings.request_error(r jsonb) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN jsonb_typeof(r) IS DISTINCT FROM 'object' THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', 'each request must be a JSON object')
    WHEN jsonb_typeof(r->'endpoint') NOT IN ('string', 'null') OR jsonb_typeof(r->'caller') NOT IN ('string', 'null')
      OR jsonb_typeof(r->'destination') NOT IN ('string', 'null') OR jsonb_typeof(r->'destinationKey') NOT IN ('string', 'null')
      OR jsonb_typeof(r->'idempotencyKey') NOT IN ('string', 'null') OR jsonb_typeof(r->'requestId') NOT IN ('string', 'null') THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', format('%s must be a string', CASE
        WHEN jsonb_typeof(r->'endpoint') NOT IN ('string', 'null') THEN 'endpoint'
        WHEN jsonb_typeof(r->'caller') NOT IN ('string', 'null') THEN 'caller'
        WHEN jsonb_typeof(r->'destination') NOT IN ('string', 'null') THEN 'destination'
        WHEN jsonb_typeof(r->'destinationKey') NOT IN ('string', 'null') THEN 'destinationKey'
        WHEN jsonb_typeof(r->'idempotencyKey') NOT IN ('string', 'null') THEN 'idempotencyKey'
        ELSE 'requestId' END))
    -- The values, as they were written, checked by input_error (which the typed entry's
    -- decide_batch calls too). Fast path: jsonb prints C0 controls as escapes and C1
    -- ones as they are, so a request whose text shows neither has none in any field, and the
    -- per-field checks are skipped. A TTL may be written as a string of digits, as it always could.
    ELSE ceilings.input_error(r->>'endpoint', r->>'caller', r->>'destination', r->>'destinationKey', r->>'idempotencyKey',
      r->>'requestId', nullif(r->'parts', 'null'::jsonb),
      CASE WHEN jsonb_typeof(r->'amount') = 'number' THEN (r->'amount')::numeric END, (r->'amount')::text,
      CASE WHEN r->>'ttlSeconds' IS NULL THEN NULL WHEN r->>'ttlSeconds' ~ '^[0-9]{1,5}$' THEN (r->>'ttlSeconds')::int ELSE 0 END,
      r::text ~ '\\[bfnrt]|\\u00[01]|[\u007f-\u009f]')
  END
$$;
