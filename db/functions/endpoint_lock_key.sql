-- Edits of ceilings and reservation batches meet on one lock per endpoint: batches take it shared,
-- edits exclusive. Row locks alone (FOR SHARE against FOR UPDATE) let a stream of batches starve a
-- kill; the lock manager queues a waiting exclusive request ahead of later shared ones, so a kill
-- waits only for the batches already in flight and binds the next one.
-- Locks: none (it names the lock).
CREATE OR REPLACE FUNCTION ceilings.endpoint_lock_key(endpoint_id int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT (x'43454c00'::bigint << 24) + endpoint_id
$$;
