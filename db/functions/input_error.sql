-- Guarantees: the input error of one reservation request's values, or NULL when the database can
-- take them: text fields without control characters (checked only when `controls` says the batch
-- may hold one) and within their lengths, parts an object, a whole amount from 1 to 2^53 - 1 (or
-- none beside parts), a TTL from 1 to 86400 (NULL: the default). Checked per request, so a bad
-- request is an error for itself alone and never makes the batch raise. decide_batch
-- calls it with typed values; request_error calls it with a JSON request's, read as they were
-- written: `amount` is the number as written (NULL when it is not a JSON number) and
-- `amount_shown` how an error names it ('"5"' for a string), `ttl_seconds` is 0 for a TTL that is
-- not a whole number.
-- Locks: none.
-- One SQL expression, STABLE (as format() and jsonb_build_object() are), so the planner inlines it
-- where it is called, with no function call per request. The checks run in this order; the first
-- that fails answers.
-- decide_batch clears a request without this call when its batch's lists pass these ranges as
-- wholes and its caller, request id and idempotency key are no longer than allowed here (its
-- `clean`), and reserve_batch_arrays takes a batch as the common one only on the same terms (its
-- phases 1 and 3): a bound changed here is changed in both.
CREATE OR REPLACE FUNCTION ceilings.input_error(
  endpoint text, caller text, destination text, destination_key text, idempotency_key text, request_id text,
  parts jsonb, amount numeric, amount_shown text, ttl_seconds int, controls boolean) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT CASE
    -- The caller is checked once trimmed: a trailing tab is whitespace, an inner one is not.
    WHEN controls AND (ceilings.has_control_chars(endpoint) OR ceilings.has_control_chars(ceilings.canonical_caller(caller))
      OR ceilings.has_control_chars(destination) OR ceilings.has_control_chars(destination_key)
      OR ceilings.has_control_chars(idempotency_key) OR ceilings.has_control_chars(request_id)) THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', format('%s must not contain control characters', CASE
        WHEN ceilings.has_control_chars(endpoint) THEN 'endpoint'
        WHEN ceilings.has_control_chars(ceilings.canonical_caller(caller)) THEN 'caller'
        WHEN ceilings.has_control_chars(destination) THEN 'destination'
        WHEN ceilings.has_control_chars(destination_key) THEN 'destinationKey'
        WHEN ceilings.has_control_chars(idempotency_key) THEN 'idempotencyKey'
        ELSE 'requestId' END))
    -- parts (units per priced part) may stand for the amount; reserve_batch checks them against the
    -- endpoint's parts (parts_error) and an amount sent beside them against their total.
    WHEN jsonb_typeof(parts) <> 'object' THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_parts',
        'message', 'parts must be an object of units per part, e.g. {"input": 1200, "output": 800}')
    -- A whole number (scale 0: 1e3 is 1000, 1.0 is not whole) between 1 and 2^53 - 1, read as a
    -- number, not printed and matched.
    WHEN (parts IS NULL OR amount IS NOT NULL OR amount_shown <> 'null')
      AND NOT coalesce(amount BETWEEN 1 AND 9007199254740991 AND scale(amount) = 0, false) THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_amount',
        'message', format('amount must be a positive whole number, got %s', coalesce(amount_shown, amount::text, 'null')))
    WHEN ttl_seconds NOT BETWEEN 1 AND 86400 THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_ttl',
        'message', 'ttlSeconds must be a whole number between 1 and 86400')
    WHEN length(idempotency_key) > 200 THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_idempotency_key',
        'message', 'idempotencyKey must be at most 200 characters')
    -- The caller is measured trimmed, but trimming never lengthens it: one of at most 200 is not trimmed.
    WHEN (length(caller) > 200 AND length(ceilings.canonical_caller(caller)) > 200) OR length(destination) > 320
      OR length(destination_key) > 320 OR length(request_id) > 100 THEN
      jsonb_build_object('status', 'error', 'code', 'invalid_input',
        'message', 'caller (200), destination (320) or requestId (100) is too long')
  END
$$;
