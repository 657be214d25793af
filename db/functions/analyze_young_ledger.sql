-- Guarantees: while `reservations` is young (fewer than 10,000 rows when its size was last
-- recorded), analyzes it each time it has at least doubled in pages since then (from 2 pages on);
-- answers whether it did. A table that old is left to autovacuum.
-- Why: every session makes reserve_batch's generic plans once and keeps them until the table's
-- size is next recorded (ANALYZE or VACUUM, which make every session plan again). A plan made on a
-- young table is made for its size: without statistics, at 50 to about 400 rows, the idempotency
-- probe goes through the endpoint's history index; with statistics of 100 rows it is a sequential
-- scan. Kept while the table grows, either scans every reservation for every keyed batch, until
-- autovacuum next analyzes (up to a minute, in which a storm writes a million rows). Analyzed at
-- every doubling, no plan outlives a table twice its size (the worker runs this every second); from
-- about 400 rows on, plans made with statistics probe the key's own index.
-- SECURITY DEFINER because ANALYZE needs the table's owner and the app role owns nothing; it takes
-- no argument, analyzes this one table, at most about a dozen times in the table's life.
-- Locks: ANALYZE takes SHARE UPDATE EXCLUSIVE on reservations, which no reservation, settle or
-- read waits for; of two workers at once, the one without the transaction advisory lock (taken
-- with try) does nothing.
CREATE OR REPLACE FUNCTION ceilings.analyze_young_ledger() RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  recorded_pages int;
  recorded_rows real;
BEGIN
  SELECT c.relpages, c.reltuples INTO recorded_pages, recorded_rows FROM pg_class c WHERE c.oid = 'reservations'::regclass;
  IF recorded_rows >= 10000
     OR pg_relation_size('reservations'::regclass) / current_setting('block_size')::int < greatest(2 * recorded_pages, 2)
     OR NOT pg_try_advisory_xact_lock(hashtext('ceilings.analyze_young_ledger')) THEN
    RETURN false;
  END IF;
  ANALYZE reservations;
  RETURN true;
END $$;
