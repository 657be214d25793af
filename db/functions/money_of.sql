-- Guarantees: the money of some units of an endpoint's priced parts, in whole micros, rounded up
-- once and never down: ceil(sum(units * price in picos) / 10^6), in integer arithmetic on numeric
-- (div truncates exactly; numeric division rounds its quotient to a scale, which under-counted
-- sums past 10^22 picos by a micro: found by lib/enforcement/money.int.test.ts).
-- parts: {name: units} (a missing part counts 0); prices: {name: picos a unit}.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.money_of(parts jsonb, prices jsonb) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT div(coalesce(sum((u.value #>> '{}')::numeric * (prices ->> u.key)::numeric), 0) + 999999, 1000000)::bigint
  FROM jsonb_each(parts) u
$$;
