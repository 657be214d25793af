-- Call inside the transaction that changes ceilings (values, kill, restore, overrides), before
-- locking their rows. Sorted, so concurrent edits of several endpoints cannot deadlock.
-- Lock order: endpoint advisory locks, exclusive, by endpoint id (step 1 of reserve_batch).
CREATE OR REPLACE FUNCTION ceilings.lock_endpoints_for_change(endpoint_ids int[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  ep int;
BEGIN
  FOR ep IN SELECT DISTINCT u FROM unnest(endpoint_ids) u WHERE u IS NOT NULL ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(ceilings.endpoint_lock_key(ep));
  END LOOP;
END $$;
