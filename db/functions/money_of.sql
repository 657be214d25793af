-- Guarantees: the money of some units of an endpoint's priced parts, in whole micros, rounded up
-- once and never down: ceil(sum(units * price in picos) / 10^6), in exact numeric arithmetic.
-- parts: {name: units} (a missing part counts 0); prices: {name: picos a unit}.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.money_of(parts jsonb, prices jsonb) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT ceil(coalesce(sum((u.value #>> '{}')::numeric * (prices ->> u.key)::numeric), 0) / 1000000)::bigint
  FROM jsonb_each(parts) u
$$;
