-- One item of resolve_batch: its shape checked, then ceilings.settle or ceilings.release.
-- A settle names its actual, or its parts ({"input": 1180, "output": 412}), or both.
-- Its counters are left to resolve_batch: the answer of a settle or release that changes them
-- carries `apply` (ceilings.settle_deferred, ceilings.release_deferred).
-- Locks: those of settle or release (already held by resolve_batch when called from there).
-- No SET clause: it reads no table (its calls name their schema), and a SET is saved and restored
-- on every call, once an item.
CREATE OR REPLACE FUNCTION ceilings.resolve_item(item jsonb)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  id_text text := item->>'id';
BEGIN
  IF jsonb_typeof(item) IS DISTINCT FROM 'object' OR jsonb_typeof(item->'id') IS DISTINCT FROM 'string'
     OR id_text !~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', 'the reservation id must be a UUID');
  END IF;
  IF jsonb_typeof(item->'caller') NOT IN ('string', 'null') THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', 'caller must be a string');
  END IF;
  IF item->>'verb' = 'release' THEN
    RETURN ceilings.release_deferred(id_text::uuid, item->>'caller');
  ELSIF item->>'verb' = 'settle' THEN
    -- parts (an endpoint priced part by part) may stand for the actual.
    IF jsonb_typeof(item->'parts') NOT IN ('object', 'null') THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts', 'message', 'parts must be an object of units per part');
    END IF;
    IF (jsonb_typeof(item->'parts') IS DISTINCT FROM 'object' OR jsonb_typeof(item->'actual') NOT IN ('null'))
       AND (jsonb_typeof(item->'actual') IS DISTINCT FROM 'number' OR item->>'actual' !~ '^[0-9]{1,16}$') THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_amount', 'message', 'actual must be a whole number, zero or more');
    END IF;
    RETURN ceilings.settle_deferred(id_text::uuid, (item->>'actual')::bigint, item->>'caller',
                                    CASE WHEN jsonb_typeof(item->'parts') = 'object' THEN item->'parts' END);
  END IF;
  RETURN jsonb_build_object('status', 'error', 'code', 'invalid_input', 'message', 'verb must be settle or release');
END $$;
