-- Guarantees: picos (units times a price in picos, summed; never below 0, as the catalog keeps
-- prices) as whole micros, rounded up once and never down: ceil(picos / 10^6) for picos >= 0 (a
-- negative sum, which no price the catalog takes makes, is off by one), in integer arithmetic on
-- numeric (div truncates exactly; numeric division rounds its quotient to a scale, which
-- under-counted sums past 10^22 picos by a micro: found by lib/enforcement/money.int.test.ts).
-- numeric, not bigint: 2^53 units at 10^15 picos is far past a bigint; each caller refuses more
-- than 2^53 - 1 micros as the input error of its request. The one rounding every worst case and
-- every settle uses (money_of, reserve_batch_arrays, decide_batch, settle_deferred); plain SQL with its argument
-- read once, so the planner inlines it, in a statement or a PL/pgSQL expression alike.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.micros_of(picos numeric) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
  SELECT div(picos + 999999, 1000000)
$$;
