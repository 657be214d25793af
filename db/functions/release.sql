-- Guarantees: gives a held reservation back (units and the call) because the work did not happen.
-- Guarded on that exact id: a late release cannot undo a newer reservation; a second release is
-- harmless; a release after settle or expiry changes nothing. p_caller, when given, must own it.
-- Lock order: the reservation row, then counters (resolve_charges). The deciding is
-- ceilings.release_deferred's.
CREATE OR REPLACE FUNCTION ceilings.release(reservation_id uuid, p_caller text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  answer jsonb := ceilings.release_deferred(reservation_id, p_caller);
BEGIN
  IF answer ? 'apply' THEN
    PERFORM ceilings.resolve_charges(jsonb_build_array(answer->'apply'));
  END IF;
  RETURN answer - 'apply';
END $$;
