-- Guarantees: while `reservations` or `counters` is young (fewer than 10,000 rows when its size
-- was last recorded), analyzes it each time it has at least doubled in pages since then (from 2
-- pages on); answers the tables it analyzed. A table that old is left to autovacuum.
-- Why: every session makes reserve_batch's generic plans once and keeps them until the table's
-- size is next recorded (ANALYZE or VACUUM, which make every session plan again). A plan made on a
-- young table is made for its size, and both tables have a second index that leads with the
-- probe's first column: without statistics the idempotency probe goes through the endpoint's
-- history index (at 50 to about 400 rows) and the counters' lock through the index of a limit's
-- window (from 0 rows: a new database's first batches), and with statistics of 100 rows either is
-- a sequential scan. Kept while the table grows, such a plan scans every reservation of the
-- endpoint, or every counter of the limit's window, for every batch, until autovacuum next
-- analyzes (up to a minute, in which a storm writes a million reservations). Analyzed at every
-- doubling, no plan outlives a table twice its size (the worker runs this every second); a few
-- hundred rows on, plans made with statistics probe each table's own key.
-- SECURITY DEFINER because ANALYZE needs the tables' owner and the app role owns nothing; it takes
-- no argument, analyzes these two tables only, each about a dozen times in its life at most. A
-- table whose owner the function's owner is not (the migrations run by another role since) is
-- left out: ANALYZE would only warn, every second, and analyze nothing.
-- Locks: ANALYZE takes SHARE UPDATE EXCLUSIVE on the table, which no reservation, settle or read
-- waits for; SKIP_LOCKED, so a VACUUM, an index build or a migration holding the table makes it skip
-- this second rather than hold the worker's fast lane; a table skipped is not in the answer. Of two
-- workers at once, the one without the transaction advisory lock (taken with try) does nothing.
CREATE OR REPLACE FUNCTION ceilings.analyze_young_tables() RETURNS text[]
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  young regclass;
  recorded_pages int;
  analyzed text[] := '{}';
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('ceilings.analyze_young_tables')) THEN
    RETURN analyzed;
  END IF;
  FOR young, recorded_pages IN
    SELECT c.oid, c.relpages FROM pg_class c
    WHERE c.oid IN ('reservations'::regclass, 'counters'::regclass) AND c.reltuples < 10000
      AND pg_relation_size(c.oid) / current_setting('block_size')::int >= greatest(2 * c.relpages, 2)
      AND pg_has_role(current_user, c.relowner, 'USAGE')
    ORDER BY c.relname
  LOOP
    EXECUTE format('ANALYZE (SKIP_LOCKED) %s', young);
    -- Analyzed, its size is recorded anew; skipped, it is as it was.
    IF (SELECT c.relpages FROM pg_class c WHERE c.oid = young) <> recorded_pages THEN
      analyzed := analyzed || young::text;
    END IF;
  END LOOP;
  RETURN analyzed;
END $$;
