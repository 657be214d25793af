-- Guarantees: the money of some units of an endpoint's priced parts, in whole micros, rounded up
-- once (micros_of) over their sum: ceil(sum(units * price in picos) / 10^6).
-- parts: {name: units} (a missing part counts 0); prices: {name: picos a unit}.
-- numeric, not bigint: 2^53 units at 10^15 picos is far past a bigint, and a cast here raised out of
-- the whole batch; each caller refuses money past 2^53 - 1 micros as the input error of its request.
-- Locks: none. PL/pgSQL for the reason part_prices is: its plan is kept, not made at every call.
CREATE OR REPLACE FUNCTION ceilings.money_of(parts jsonb, prices jsonb) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN (SELECT ceilings.micros_of(coalesce(sum((u.value #>> '{}')::numeric * (prices ->> u.key)::numeric), 0))
          FROM jsonb_each(parts) u);
END $$;
