-- Guarantees: settles a reservation to the actual units used, in the window it was made in.
--   * The charge never exceeds the endpoint's per-call max: a larger actual is the input error
--     invalid_actual and nothing changes, so one caller cannot spend everyone's budget by lying.
--   * An overrun (actual above the reservation, within the per-call max) is charged in full (the
--     ledger tells the truth), flagged on the reservation and raises an `overrun` alert naming
--     the caller: the caller's account and every ceiling the reservation charged pay for it.
--   * An overrun reported after the reservation expired or was released is not lost: it is
--     charged the same way, the reservation keeps its state, and the answer is already_resolved
--     with overrun: true and the units charged. Reporting it again charges nothing more.
--   * p_caller, when given, must own the reservation (the HTTP API passes the key's account).
-- Lock order: the reservation row, then usage rows (resolve_charges); the alert last.
CREATE OR REPLACE FUNCTION ceilings.settle(reservation_id uuid, actual bigint, p_caller text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  res reservations;
  ep endpoints;
  caller_key text := ceilings.canonical_caller(p_caller);
  charged bigint;
BEGIN
  IF actual IS NULL OR actual < 0 OR actual > 9007199254740991 THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_amount',
      'message', 'actual must be a whole number, zero or more');
  END IF;
  SELECT * INTO res FROM reservations WHERE id = reservation_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('status', 'not_found', 'message', 'no such reservation');
  END IF;
  IF p_caller IS NOT NULL AND res.caller IS DISTINCT FROM coalesce(caller_key, '') THEN
    RETURN jsonb_build_object('status', 'forbidden', 'message', 'this reservation belongs to another account');
  END IF;
  SELECT * INTO ep FROM endpoints WHERE id = res.endpoint_id;
  -- A per-call max lowered after the reservation does not refuse a settle within what was reserved.
  IF actual > greatest(ep.per_call_max, res.amount) THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_actual',
      'message', format('actual %s is above the per-call max of %s: nothing was charged; settle with at most %s',
                        actual, greatest(ep.per_call_max, res.amount), greatest(ep.per_call_max, res.amount)));
  END IF;
  IF res.state = 'settled' AND res.settled_amount = actual THEN
    RETURN jsonb_build_object('status', 'settled', 'replay', true, 'reservationId', res.id,
      'actual', actual, 'overrun', res.overrun);
  END IF;
  IF res.state IN ('expired', 'released') AND res.overrun AND res.settled_amount = actual THEN
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state, 'replay', true,
      'overrun', true, 'charged', CASE res.state WHEN 'expired' THEN actual - res.amount ELSE actual END,
      'message', format('reservation is already %s; its overrun of %s was recorded', res.state, actual));
  END IF;
  IF res.state = 'held' THEN
    PERFORM ceilings.resolve_charges(res.charges, 'settle', actual);
    UPDATE reservations SET state = 'settled', settled_amount = actual, overrun = actual > res.amount,
                            resolved_at = now()
    WHERE id = res.id;
    charged := actual;
  ELSIF res.state IN ('expired', 'released') AND actual > res.amount AND NOT res.overrun THEN
    -- The provider charged for work the ledger had closed: charge it to the reservation's window.
    PERFORM ceilings.resolve_charges(res.charges,
      CASE res.state WHEN 'expired' THEN 'overrun_after_expiry' ELSE 'overrun_after_release' END, actual);
    UPDATE reservations SET overrun = true, settled_amount = actual WHERE id = res.id;
    charged := CASE res.state WHEN 'expired' THEN actual - res.amount ELSE actual END;
  ELSE
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state,
      'message', format('reservation is already %s', res.state));
  END IF;
  IF actual > res.amount THEN
    PERFORM ceilings.fire_alert('overrun', 'overrun:' || res.id, res.endpoint_id, NULL, NULL,
      format('%s: caller %s settled a reservation at %s, above the %s reserved%s', ep.key,
             CASE WHEN res.caller = '' THEN '(none)' ELSE res.caller END, actual, res.amount,
             CASE WHEN res.state = 'held' THEN '' ELSE format(' (after it was %s)', res.state) END),
      jsonb_build_object('reservationId', res.id, 'caller', res.caller, 'reserved', res.amount, 'actual', actual,
                         'state', res.state));
  END IF;
  IF res.state <> 'held' THEN
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state, 'replay', false,
      'overrun', true, 'charged', charged,
      'message', format('reservation is already %s; its overrun of %s was recorded', res.state, actual));
  END IF;
  RETURN jsonb_build_object('status', 'settled', 'replay', false, 'reservationId', res.id,
    'actual', actual, 'overrun', actual > res.amount);
END $$;
