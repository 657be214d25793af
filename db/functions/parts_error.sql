-- Guarantees: the input error of a request's or a settle's parts against an endpoint's priced
-- parts, or NULL: `parts` is an object naming every part of the endpoint, and only those, each a
-- whole number of units from 0 to 2^53 - 1, with a total above zero for a reservation (zero is a
-- settle of work that used nothing). The error names the part.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.parts_error(parts jsonb, endpoint_parts jsonb, endpoint_key text, for_settle boolean)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  k text;
  v jsonb;
  names text[] := ARRAY(SELECT p->>'name' FROM jsonb_array_elements(endpoint_parts) p);
  total numeric := 0;
BEGIN
  IF jsonb_typeof(parts) IS DISTINCT FROM 'object' THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts',
      'message', format('parts must be an object of units per part (%s)', array_to_string(names, ', ')));
  END IF;
  FOR k, v IN SELECT * FROM jsonb_each(parts) LOOP
    IF NOT k = ANY (names) THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts',
        'message', format('parts.%s is not a part of %s (its parts: %s)', k, endpoint_key, array_to_string(names, ', ')));
    END IF;
    IF jsonb_typeof(v) IS DISTINCT FROM 'number' OR v::text !~ '^[0-9]{1,16}$' OR v::text::numeric > 9007199254740991 THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts',
        'message', format('parts.%s must be a whole number of units from 0 to 9007199254740991, got %s', k, v));
    END IF;
    total := total + v::text::numeric;
  END LOOP;
  FOREACH k IN ARRAY names LOOP
    IF NOT parts ? k THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts',
        'message', format('parts.%s is missing: %s is reserved and settled part by part (%s)', k, endpoint_key, array_to_string(names, ', ')));
    END IF;
  END LOOP;
  IF total > 9007199254740991 OR (total = 0 AND NOT for_settle) THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts',
      'message', format('the parts must add up to a whole number from 1 to 9007199254740991, got %s', total));
  END IF;
  RETURN NULL;
END $$;
