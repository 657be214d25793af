-- Guarantees: settles a reservation to the actual units used, in the window it was made in.
--   * An endpoint with several priced parts is settled part by part (actual_parts, every part
--     named); its actual is their total. The budgets it charged are corrected to the money of the
--     actual parts at the prices the reservation was granted at, rounded up once.
--   * The charge never exceeds the endpoint's per-call max: a larger actual is the input error
--     invalid_actual and nothing changes, so one caller cannot spend everyone's budget by lying.
--   * An overrun (actual above the reservation, within the per-call max, or money above the money
--     reserved, when the parts shift to a dearer one) is charged in full (the
--     ledger tells the truth), flagged on the reservation and raises an `overrun` alert naming
--     the caller: the caller's account and every ceiling the reservation charged pay for it.
--   * An overrun reported after the reservation expired or was released is not lost: it is
--     charged the same way, the reservation keeps its state, and the answer is already_resolved
--     with overrun: true and the units charged. Reporting it again charges nothing more.
--   * p_caller, when given, must own the reservation (the HTTP API passes the key's account).
-- Lock order: the reservation row, then (a late overrun) the endpoint's closed-windows advisory lock, then
-- counters (resolve_charges); the alert last. The deciding is ceilings.settle_deferred's.
CREATE OR REPLACE FUNCTION ceilings.settle(reservation_id uuid, actual bigint, p_caller text DEFAULT NULL, actual_parts jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  answer jsonb := ceilings.settle_deferred(reservation_id, actual, p_caller, actual_parts);
BEGIN
  IF answer ? 'apply' THEN
    PERFORM ceilings.resolve_charges(jsonb_build_array(answer->'apply'));
  END IF;
  RETURN answer - 'apply';
END $$;
