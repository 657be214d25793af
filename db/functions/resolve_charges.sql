-- Guarantees: applies one resolution to every counter a reservation charged, in the window the
-- reservation was made in (the charge names it), so a late settle never lands in a later window.
-- A ceiling's charge ({c, k, w, n, m}) counts units or calls; a budget's ({b, k, w, n}) counts
-- money in micros: its n is the money reserved and actual_money the money of the actual parts.
--   settle:                held -> settled at the actual units (money); calls stay counted
--   release:               held given back, units, the call and the money
--   expire:                held -> settled in full (the safe direction)
--   overrun_after_expiry:  an expired reservation's actual above its amount (or money): the
--                          difference is added (the call was counted at expiry)
--   overrun_after_release: a released reservation settled above its amount after all: the
--                          actual units, the call and the actual money are counted again
-- Lock order: usage rows by (ceiling id, scope key, window start), then budget_usage rows by
-- (budget id, scope key, window start): the order reserve_batch uses.
CREATE OR REPLACE FUNCTION ceilings.resolve_charges(charges jsonb, kind text, actual bigint, actual_money bigint DEFAULT 0)
RETURNS void LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  ch jsonb;
  reserved bigint;
BEGIN
  IF kind NOT IN ('settle', 'release', 'expire', 'overrun_after_expiry', 'overrun_after_release') THEN
    RAISE EXCEPTION 'resolve_charges: unknown kind %', kind USING ERRCODE = '22023';
  END IF;
  FOR ch IN SELECT value FROM jsonb_array_elements(charges) WHERE value ? 'c'
            ORDER BY (value->>'c')::int, value->>'k', (value->>'w')::timestamptz LOOP
    reserved := (ch->>'n')::bigint;
    UPDATE usage
    SET held = held - CASE WHEN kind IN ('settle', 'release', 'expire') THEN reserved ELSE 0 END,
        settled = settled + CASE
          WHEN kind = 'release' THEN 0
          WHEN kind = 'settle' AND ch->>'m' = 'u' THEN actual
          WHEN kind = 'overrun_after_expiry' THEN CASE WHEN ch->>'m' = 'u' THEN greatest(actual - reserved, 0) ELSE 0 END
          WHEN kind = 'overrun_after_release' THEN CASE WHEN ch->>'m' = 'u' THEN actual ELSE reserved END
          ELSE reserved END
    WHERE ceiling_id = (ch->>'c')::int AND scope_key = ch->>'k' AND window_start = (ch->>'w')::timestamptz;
  END LOOP;
  FOR ch IN SELECT value FROM jsonb_array_elements(charges) WHERE value ? 'b'
            ORDER BY (value->>'b')::int, value->>'k', (value->>'w')::timestamptz LOOP
    reserved := (ch->>'n')::bigint;
    UPDATE budget_usage
    SET held = held - CASE WHEN kind IN ('settle', 'release', 'expire') THEN reserved ELSE 0 END,
        settled = settled + CASE kind
          WHEN 'release' THEN 0
          WHEN 'settle' THEN actual_money
          WHEN 'overrun_after_expiry' THEN greatest(actual_money - reserved, 0)
          WHEN 'overrun_after_release' THEN actual_money
          ELSE reserved END
    WHERE budget_id = (ch->>'b')::int AND scope_key = ch->>'k' AND window_start = (ch->>'w')::timestamptz;
  END LOOP;
END $$;
