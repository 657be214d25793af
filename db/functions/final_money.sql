-- Guarantees: what a reservation finally charged in money, by final_units' rules. A settle from
-- before reservations kept their money (migration 0028) counts the money reserved. The one
-- spelling every reader of final money uses (the reconciliation ledger, a budget's spend by
-- member, the what-if's ledger); plain SQL, so the planner inlines it.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.final_money(r reservations) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE r.state
    WHEN 'settled' THEN coalesce(r.settled_money, r.money)
    WHEN 'held' THEN r.money
    WHEN 'expired' THEN greatest(r.money, coalesce(r.settled_money, 0))
    ELSE coalesce(r.settled_money, 0) END
$$;
