-- Guarantees: gives a held reservation back (units and the call) because the work did not happen.
-- Guarded on that exact id: a late release cannot undo a newer reservation; a second release is
-- harmless; a release after settle or expiry changes nothing. p_caller, when given, must own it.
-- ceilings.release_deferred decides and writes the reservation, and leaves the counters to its
-- caller: a release that changes them answers `apply` (what ceilings.resolve_charges takes), so
-- resolve_batch updates each counter once for all its items. ceilings.release applies it at once.
-- Lock order: the reservation row, then counters (resolve_charges, by the caller).
CREATE OR REPLACE FUNCTION ceilings.release_deferred(reservation_id uuid, p_caller text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  res reservations;
  caller_key text := ceilings.canonical_caller(p_caller);
BEGIN
  SELECT * INTO res FROM reservations WHERE id = reservation_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('status', 'not_found', 'message', 'no such reservation');
  END IF;
  IF p_caller IS NOT NULL AND res.caller IS DISTINCT FROM coalesce(caller_key, '') THEN
    RETURN jsonb_build_object('status', 'forbidden', 'message', 'this reservation belongs to another account');
  END IF;
  IF res.state = 'released' THEN
    RETURN jsonb_build_object('status', 'released', 'replay', true, 'reservationId', res.id);
  END IF;
  IF res.state <> 'held' THEN
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state,
      'message', format('reservation is already %s', res.state));
  END IF;
  UPDATE reservations SET state = 'released', resolved_at = now() WHERE id = res.id;
  RETURN jsonb_build_object('status', 'released', 'replay', false, 'reservationId', res.id,
    'apply', jsonb_build_object('charges', res.charges, 'kind', 'release'));
END $$;
