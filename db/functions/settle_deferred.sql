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
-- ceilings.settle_deferred decides and writes the reservation, and leaves the counters to its caller:
-- an answer that changes them carries `apply` ({charges, kind, actual, money}, what
-- ceilings.resolve_charges takes), so resolve_batch updates each counter once for all its items.
-- ceilings.settle applies it at once.
-- Lock order: the reservation row, then (a late overrun) the endpoint's closed-windows advisory lock, then
-- counters (resolve_charges, by the caller); the alert last.
CREATE OR REPLACE FUNCTION ceilings.settle_deferred(reservation_id uuid, actual bigint, p_caller text DEFAULT NULL, actual_parts jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  res reservations;
  ep endpoints;
  caller_key text := ceilings.canonical_caller(p_caller);
  charged bigint;
  actual_money bigint;
  v_money numeric;
  is_overrun boolean;
  parts_answer jsonb;
  apply jsonb;
BEGIN
  IF actual_parts IS NULL AND (actual IS NULL OR actual < 0 OR actual > 9007199254740991) THEN
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
  -- The parts: required where the reservation has them; one part's units are the actual.
  IF actual_parts IS NOT NULL AND jsonb_typeof(actual_parts) <> 'null' THEN
    -- Against the parts the reservation was made with, whatever the endpoint has become since.
    parts_answer := ceilings.parts_error(actual_parts,
      CASE WHEN res.parts IS NULL THEN ep.parts ELSE (SELECT jsonb_agg(jsonb_build_object('name', k)) FROM jsonb_object_keys(res.parts) k) END,
      ep.key, true);
    IF parts_answer IS NOT NULL THEN
      RETURN parts_answer;
    END IF;
    IF actual IS NOT NULL AND actual <> (SELECT sum((u.value #>> '{}')::numeric) FROM jsonb_each(actual_parts) u) THEN
      RETURN jsonb_build_object('status', 'error', 'code', 'invalid_amount',
        'message', format('actual %s is not the total of the parts: send one or the other', actual));
    END IF;
    actual := (SELECT sum((u.value #>> '{}')::bigint) FROM jsonb_each(actual_parts) u);
    IF res.parts IS NULL THEN
      actual_parts := NULL;  -- one part: its units are the actual
    END IF;
  ELSIF res.parts IS NOT NULL THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_parts',
      'message', format('%s is settled part by part: send parts (%s)', ep.key,
        (SELECT string_agg(k, ', ') FROM jsonb_object_keys(res.parts) k)));
  END IF;
  -- Money at the prices the reservation was granted at (the endpoint's only for one granted before
  -- every reservation kept its prices, and not backfilled: one resolved before migration 0028).
  -- In numeric first: units within the per-call max at a price of up to 10^15 picos can be more
  -- micros than a bigint holds, and more than 2^53 - 1 is more than a reservation may hold.
  v_money := CASE WHEN res.parts IS NULL
    THEN ceilings.micros_of(actual::numeric * coalesce((SELECT max(v::text::numeric) FROM jsonb_each(res.prices) p(k, v)), (ep.parts->0->>'pricePico')::numeric))
    ELSE ceilings.money_of(actual_parts, coalesce(res.prices, ceilings.part_prices(ep.parts))) END;
  IF v_money > 9007199254740991 THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_actual',
      'message', format('actual %s costs %s micros, more money than can be counted: nothing was charged', actual, v_money));
  END IF;
  actual_money := v_money;
  -- With one part, more money is more units; with several, a shift to a dearer part is one too.
  is_overrun := actual > res.amount OR (res.parts IS NOT NULL AND actual_money > res.money);
  -- A per-call max lowered after the reservation does not refuse a settle within what was reserved.
  IF actual > greatest(ep.per_call_max, res.amount) THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_actual',
      'message', format('actual %s is above the per-call max of %s: nothing was charged; settle with at most %s',
                        actual, greatest(ep.per_call_max, res.amount), greatest(ep.per_call_max, res.amount)));
  END IF;
  IF res.state = 'settled' AND res.settled_amount = actual AND res.settled_parts IS NOT DISTINCT FROM actual_parts THEN
    RETURN jsonb_build_object('status', 'settled', 'replay', true, 'reservationId', res.id,
      'actual', actual, 'overrun', res.overrun);
  END IF;
  IF res.state IN ('expired', 'released') AND res.overrun AND res.settled_amount = actual
     AND res.settled_parts IS NOT DISTINCT FROM actual_parts THEN
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state, 'replay', true,
      'overrun', true, 'charged', CASE res.state WHEN 'expired' THEN greatest(actual - res.amount, 0) ELSE actual END,
      'message', format('reservation is already %s; its overrun of %s was recorded', res.state, actual));
  END IF;
  IF res.state = 'held' THEN
    apply := jsonb_build_object('charges', res.charges, 'kind', 'settle', 'actual', actual, 'money', actual_money);
    UPDATE reservations SET state = 'settled', settled_amount = actual, settled_parts = actual_parts,
                            settled_money = actual_money, overrun = is_overrun, resolved_at = now()
    WHERE id = res.id;
    charged := actual;
  ELSIF res.state IN ('expired', 'released') AND is_overrun AND NOT res.overrun THEN
    -- The ledgers of closed windows no longer say what the grant charged: the what-if's day and the
    -- accounts' 30-day totals of the endpoint's ceilings that hold its window. The lock is the one
    -- their builders hold while they read the endpoint, so what was read before this commits is
    -- deleted here, and what is read after reads the overrun (lib/counters/closed-windows.ts).
    -- Taken before the counters: a build in progress is waited for with no counter held (a batch,
    -- resolve_batch, takes it for all its late overruns before it locks any counter).
    PERFORM pg_advisory_xact_lock(hashtext('closed_windows'), res.endpoint_id);
    DELETE FROM what_if_days WHERE endpoint_id = res.endpoint_id AND day = (res.created_at AT TIME ZONE 'UTC')::date;
    DELETE FROM caller_totals_state s USING ceilings c
    WHERE c.endpoint_id = res.endpoint_id AND s.ceiling_id = c.id AND res.created_at < s.through_start;
    -- The provider charged for work the ledger had closed: charge it to the reservation's window.
    apply := jsonb_build_object('charges', res.charges,
      'kind', CASE res.state WHEN 'expired' THEN 'overrun_after_expiry' ELSE 'overrun_after_release' END, 'actual', actual, 'money', actual_money);
    UPDATE reservations SET overrun = true, settled_amount = actual, settled_parts = actual_parts, settled_money = actual_money
    WHERE id = res.id;
    charged := CASE res.state WHEN 'expired' THEN greatest(actual - res.amount, 0) ELSE actual END;
  ELSE
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state,
      'message', format('reservation is already %s', res.state));
  END IF;
  IF is_overrun THEN
    PERFORM ceilings.fire_alert('overrun', 'overrun:' || res.id, res.endpoint_id, NULL, NULL,
      format('%s: caller %s settled a reservation at %s, above the %s reserved%s', ep.key,
             CASE WHEN res.caller = '' THEN '(none)' ELSE res.caller END,
             CASE WHEN actual > res.amount THEN actual::text ELSE ceilings.format_money(actual_money, ep.currency) END,
             CASE WHEN actual > res.amount THEN res.amount::text ELSE ceilings.format_money(res.money, ep.currency) END,
             CASE WHEN res.state = 'held' THEN '' ELSE format(' (after it was %s)', res.state) END),
      jsonb_build_object('reservationId', res.id, 'caller', res.caller, 'reserved', res.amount, 'actual', actual,
                         'reservedMoney', res.money, 'actualMoney', actual_money, 'state', res.state));
  END IF;
  IF res.state <> 'held' THEN
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state, 'replay', false,
      'overrun', true, 'charged', charged,
      'message', format('reservation is already %s; its overrun of %s was recorded', res.state, actual), 'apply', apply);
  END IF;
  RETURN jsonb_build_object('status', 'settled', 'replay', false, 'reservationId', res.id,
    'actual', actual, 'overrun', is_overrun, 'apply', apply);
END $$;
