-- Guarantees: what a reservation finally charged its counters in units, as reserve and
-- resolve_charges leave them once it resolved: a settle its actual (overruns included), an expiry
-- the greater of what was reserved and an overrun reported after it, a release nothing but an
-- overrun reported after it, a held reservation its worst case (what the counters hold for it now).
-- The one spelling every reader of final cost uses (the reconciliation ledger, the what-if's
-- ledger; final_money for money); plain SQL, so the planner inlines it.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.final_units(r reservations) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE r.state
    WHEN 'settled' THEN coalesce(r.settled_amount, r.amount)
    WHEN 'held' THEN r.amount
    WHEN 'expired' THEN greatest(r.amount, coalesce(r.settled_amount, 0))
    ELSE coalesce(r.settled_amount, 0) END
$$;
