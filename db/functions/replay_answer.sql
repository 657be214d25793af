-- Guarantees: the one answer to a retry whose idempotency key already names a reservation. Other
-- parameters: a conflict. A held reservation: the same grant again (replay). A settled, released
-- or expired one: its state, never a grant, so a caller cannot spend on a hold the ledger no
-- longer has (a settled one means the work is done; do not spend again).
-- Locks: none (the caller read the row).
CREATE OR REPLACE FUNCTION ceilings.replay_answer(existing reservations, p_amount bigint, p_destination_key text, p_parts jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN existing.amount <> p_amount OR existing.destination_key IS DISTINCT FROM p_destination_key
         OR existing.parts IS DISTINCT FROM p_parts THEN
      jsonb_build_object('status', 'error', 'code', 'idempotency_conflict',
        'message', 'this idempotency key was used with other parameters', 'reservationId', existing.id)
    WHEN existing.state = 'held' THEN
      jsonb_build_object('status', 'granted', 'replay', true, 'reservationId', existing.id,
        'expiresAt', existing.expires_at, 'remaining', '[]'::jsonb)
    ELSE
      jsonb_build_object('status', 'resolved', 'replay', true, 'reservationId', existing.id,
        'state', existing.state,
        'message', CASE existing.state
          WHEN 'settled' THEN 'this idempotency key''s reservation is settled: the work is done, do not spend again'
          ELSE format('this idempotency key''s reservation was %s: it holds nothing; use a new key to reserve again', existing.state) END)
  END
$$;
