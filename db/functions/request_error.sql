-- Guarantees: the input error of one reservation request, or NULL when the database can take it:
-- shape, whole positive amount (or parts, an object), TTL in range, text fields without control characters and within
-- their lengths. Checked per request, so a bad request is an error for itself alone and never
-- makes the batch raise.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.request_error(r jsonb) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  amount_text text := r->>'amount';
  ttl_text text := coalesce(r->>'ttlSeconds', '300');
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
  -- Fast path: jsonb prints C0 controls as escapes and C1 ones as they are, so a request whose
  -- text shows neither has none in any field, and the per-field checks are skipped.
  IF r::text ~ '\\[bfnrt]|\\u00[01]|[\u007f-\u009f]' THEN
    FOREACH field IN ARRAY ARRAY['endpoint', 'caller', 'destination', 'destinationKey', 'idempotencyKey', 'requestId'] LOOP
      -- The caller is checked once trimmed: a trailing tab is whitespace, an inner one is not.
      IF ceilings.has_control_chars(CASE WHEN field = 'caller' THEN ceilings.canonical_caller(r->>field) ELSE r->>field END) THEN
        RETURN jsonb_build_object('status', 'error', 'code', 'invalid_input',
          'message', format('%s must not contain control characters', field));
      END IF;
    END LOOP;
  END IF;
  -- parts (units per priced part) may stand for the amount; reserve_batch checks them against the
  -- endpoint's parts (parts_error) and an amount sent beside them against their total.
  IF r->'parts' IS NOT NULL AND jsonb_typeof(r->'parts') <> 'null' THEN
    IF jsonb_typeof(r->'parts') <> 'object' THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts',
        'message', 'parts must be an object of units per part, e.g. {"input": 1200, "output": 800}');
    END IF;
    IF r->'amount' IS NOT NULL AND jsonb_typeof(r->'amount') <> 'null' AND (jsonb_typeof(r->'amount') <> 'number'
       OR amount_text !~ '^[0-9]{1,16}$' OR amount_text::numeric > 9007199254740991 OR amount_text::bigint <= 0) THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_amount',
        'message', format('amount must be a positive whole number, got %s', r->'amount'));
    END IF;
  ELSIF jsonb_typeof(r->'amount') IS DISTINCT FROM 'number' OR amount_text !~ '^[0-9]{1,16}$'
     OR amount_text::numeric > 9007199254740991 OR amount_text::bigint <= 0 THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_amount',
      'message', format('amount must be a positive whole number, got %s', coalesce(r->'amount', 'null'::jsonb)));
  END IF;
  IF ttl_text !~ '^[0-9]{1,5}$' OR ttl_text::int NOT BETWEEN 1 AND 86400 THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_ttl',
      'message', 'ttlSeconds must be a whole number between 1 and 86400');
  END IF;
  IF length(r->>'idempotencyKey') > 200 THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_idempotency_key',
      'message', 'idempotencyKey must be at most 200 characters');
  END IF;
  IF length(ceilings.canonical_caller(r->>'caller')) > 200 OR length(r->>'destination') > 320
     OR length(r->>'destinationKey') > 320 OR length(r->>'requestId') > 100 THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_input',
      'message', 'caller (200), destination (320) or requestId (100) is too long');
  END IF;
  RETURN NULL;
END $$;
