-- Guarantees: the input error of one reservation request, or NULL when the database can take it:
-- shape, whole positive amount (or parts, an object), TTL in range, text fields without control characters and within
-- their lengths. Checked per request, so a bad request is an error for itself alone and never
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
    -- Fast path: jsonb prints C0 controls as escapes and C1 ones as they are, so a request whose
    -- text shows neither has none in any field, and the per-field checks are skipped. The caller
    -- is checked once trimmed: a trailing tab is whitespace, an inner one is not.
    WHEN r::text ~ '\\[bfnrt]|\\u00[01]|[\u007f-\u009f]' AND (ceilings.has_control_chars(r->>'endpoint')
      OR ceilings.has_control_chars(ceilings.canonical_caller(r->>'caller')) OR ceilings.has_control_chars(r->>'destination')
      OR ceilings.has_control_chars(r->>'destinationKey') OR ceilings.has_control_chars(r->>'idempotencyKey')
      OR ceilings.has_control_chars(r->>'requestId')) THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', format('%s must not contain control characters', CASE
        WHEN ceilings.has_control_chars(r->>'endpoint') THEN 'endpoint'
        WHEN ceilings.has_control_chars(ceilings.canonical_caller(r->>'caller')) THEN 'caller'
        WHEN ceilings.has_control_chars(r->>'destination') THEN 'destination'
        WHEN ceilings.has_control_chars(r->>'destinationKey') THEN 'destinationKey'
        WHEN ceilings.has_control_chars(r->>'idempotencyKey') THEN 'idempotencyKey'
        ELSE 'requestId' END))
    -- parts (units per priced part) may stand for the amount; reserve_batch checks them against the
    -- endpoint's parts (parts_error) and an amount sent beside them against their total.
    WHEN jsonb_typeof(r->'parts') NOT IN ('object', 'null') THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_parts',
        'message', 'parts must be an object of units per part, e.g. {"input": 1200, "output": 800}')
    -- A whole positive amount of at most 2^53 - 1: 16 digits at most before any cast, so no cast raises.
    -- Read as a number, not printed and matched: a whole number (scale 0: 1e3 is 1000, 1.0 is not
    -- whole) between 1 and 2^53 - 1. A regular expression and a parse for every request were a
    -- third of this function's cost.
    WHEN jsonb_typeof(r->'parts') = 'object' AND jsonb_typeof(r->'amount') <> 'null'
      AND NOT CASE WHEN jsonb_typeof(r->'amount') = 'number'
                   THEN (r->'amount')::numeric BETWEEN 1 AND 9007199254740991 AND scale((r->'amount')::numeric) = 0 ELSE false END THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_amount',
        'message', format('amount must be a positive whole number, got %s', r->'amount'))
    WHEN jsonb_typeof(r->'parts') IS DISTINCT FROM 'object'
      AND NOT CASE WHEN jsonb_typeof(r->'amount') = 'number'
                   THEN (r->'amount')::numeric BETWEEN 1 AND 9007199254740991 AND scale((r->'amount')::numeric) = 0 ELSE false END THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_amount',
        'message', format('amount must be a positive whole number, got %s', coalesce(r->'amount', 'null'::jsonb)))
    -- No TTL (or null) is the default, 300, with nothing to check.
    WHEN NOT CASE WHEN r->>'ttlSeconds' IS NULL THEN true
                  WHEN r->>'ttlSeconds' ~ '^[0-9]{1,5}$' THEN (r->>'ttlSeconds')::int BETWEEN 1 AND 86400 ELSE false END THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_ttl',
        'message', 'ttlSeconds must be a whole number between 1 and 86400')
    WHEN length(r->>'idempotencyKey') > 200 THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_idempotency_key',
        'message', 'idempotencyKey must be at most 200 characters')
    -- The caller is measured trimmed, but trimming never lengthens it: one of at most 200 is not trimmed.
    WHEN (length(r->>'caller') > 200 AND length(ceilings.canonical_caller(r->>'caller')) > 200) OR length(r->>'destination') > 320
      OR length(r->>'destinationKey') > 320 OR length(r->>'requestId') > 100 THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_input',
        'message', 'caller (200), destination (320) or requestId (100) is too long')
  END
$$;
