-- The sweeper: held reservations past their TTL count as fully spent (the safe direction) and are
-- marked expired. SKIP LOCKED lets two sweepers, or a sweeper and a settle, run at once; the charges
-- of all swept reservations are applied together in the fixed counter order, so no deadlock.
-- The hot counters reservations wait on are taken last: the reservations are marked first, and
-- resolve_charges updates each distinct counter once for the whole batch, so a batch of 500 on one
-- endpoint holds its counter for one update until commit, not for 500.
-- Lock order: held reservation rows (SKIP LOCKED), then counters (resolve_charges), then alerts.
CREATE OR REPLACE FUNCTION ceilings.expire_reservations(max_rows int DEFAULT 500)
RETURNS int LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  ids uuid[];
  all_charges reservation_charge[];
  ep record;
BEGIN
  WITH due AS (
    SELECT r.id, r.charges FROM reservations r
    WHERE r.state = 'held' AND r.expires_at <= now()
    ORDER BY r.expires_at LIMIT max_rows
    FOR UPDATE SKIP LOCKED
  )
  SELECT array_agg(id), coalesce(array_agg(c) FILTER (WHERE c.limit_id IS NOT NULL), '{}') INTO ids, all_charges
  FROM due LEFT JOIN LATERAL unnest(due.charges) c ON true;
  IF ids IS NULL THEN
    RETURN 0;
  END IF;
  SELECT array_agg(DISTINCT i) INTO ids FROM unnest(ids) i;
  UPDATE reservations SET state = 'expired', resolved_at = now() WHERE id = ANY (ids);
  PERFORM ceilings.resolve_charges(jsonb_build_array(jsonb_build_object('charges', all_charges, 'kind', 'expire')));
  FOR ep IN SELECT r.endpoint_id, e.key, count(*) AS n FROM reservations r JOIN endpoints e ON e.id = r.endpoint_id
            WHERE r.id = ANY (ids) GROUP BY r.endpoint_id, e.key LOOP
    PERFORM ceilings.fire_alert('expiry',
      format('expiry:%s:%s', ep.endpoint_id, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24')),
      ep.endpoint_id, NULL, NULL,
      format('%s: %s reservation(s) expired unsettled and were counted as fully spent', ep.key, ep.n),
      jsonb_build_object('expired', ep.n));
  END LOOP;
  RETURN array_length(ids, 1);
END $$;
