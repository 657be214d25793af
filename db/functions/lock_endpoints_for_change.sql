-- Call inside the transaction that changes ceilings (values, kill, restore, overrides), before
-- locking their rows. Sorted, so concurrent edits of several endpoints cannot deadlock.
-- Then, with every batch that read the endpoints' configuration before this change committed (and
-- may have kept it) done, forgets what was kept of it (endpoint_config): the next batch reads the
-- changed configuration. In READ COMMITTED (what the app runs) by a delete: the statement's
-- snapshot is taken after the locks, so it sees every row a batch kept while this change waited
-- for them. Under REPEATABLE READ or SERIALIZABLE the transaction's snapshot may be older than the
-- locks, and a delete would pass over a row kept meanwhile without a word: the whole table is
-- emptied instead (TRUNCATE removes what no snapshot sees; the batches of other endpoints wait
-- for this change's commit, a change no dashboard makes). SECURITY DEFINER for the delete alone:
-- the app role may not write the kept rows (db/roles.ts); forgetting one only makes the next batch
-- read the tables again.
-- Lock order: endpoint advisory locks, exclusive, by endpoint id (step 1 of reserve_batch).
CREATE OR REPLACE FUNCTION ceilings.lock_endpoints_for_change(endpoint_ids int[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  ep int;
BEGIN
  FOR ep IN SELECT DISTINCT u FROM unnest(endpoint_ids) u WHERE u IS NOT NULL ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(ceilings.endpoint_lock_key(ep));
  END LOOP;
  IF current_setting('transaction_isolation') = 'read committed' THEN
    DELETE FROM endpoint_config_cache c WHERE c.id = ANY (endpoint_ids);
  ELSE
    TRUNCATE endpoint_config_cache;
  END IF;
END $$;
