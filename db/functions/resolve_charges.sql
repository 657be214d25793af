-- Guarantees: applies resolutions to every counter the reservations charged, in the window each
-- reservation was made in (the charge names it), so a late settle never lands in a later window.
-- applies: [{charges, kind, actual, money}], one per resolution (a settle, a release, a sweep).
-- A charge (a reservation_charge as JSON: limit_id, scope_key, window_start, measure, amount)
-- names its limit's counter and what it holds there, in the limit's measure: units (u) and calls
-- (c) for a ceiling, micros (m) for a budget. What a resolution
-- leaves settled is the actual in that measure: actual (units) or money (micros); a call stays
-- one call.
--   settle:                held -> settled at the actual; calls stay counted
--   release:               held given back: units, the call and the money
--   expire:                held -> settled in full (the safe direction)
--   overrun_after_expiry:  an expired reservation's actual above what it held: the difference is
--                          added (the call was counted at expiry)
--   overrun_after_release: a released reservation settled above its amount after all: the
--                          actual, the call and the actual money are counted again
-- Set-based: the charges of every resolution are summed per distinct counter (every change is an
-- addition, so the sum is what one update per charge would leave) and each counter is updated
-- once. The sweeper resolves 500 reservations at a time and resolve_batch up to 128 settles and
-- releases, most of them on the same hot counters: one update per counter, not per charge, so the
-- rows reservations wait on are held for a moment, not for the whole batch, and a row updated
-- once leaves one new version, not one per charge.
-- Lock order: counters by (limit id, scope key, window start), the order reserve_batch uses,
-- locked by one SELECT ... ORDER BY ... FOR UPDATE (rows lock in the order they come out of the
-- sort) before the one UPDATE.
CREATE OR REPLACE FUNCTION ceilings.resolve_charges(applies jsonb)
RETURNS void LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  ids int[];
  keys text[];
  windows timestamptz[];
  held_off bigint[];
  settled_on bigint[];
BEGIN
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(applies) a
             WHERE NOT coalesce(a->>'kind' IN ('settle', 'release', 'expire', 'overrun_after_expiry', 'overrun_after_release'), false)) THEN
    RAISE EXCEPTION 'resolve_charges: unknown kind' USING ERRCODE = '22023';
  END IF;

  SELECT array_agg(l ORDER BY l, k, w), array_agg(k ORDER BY l, k, w), array_agg(w ORDER BY l, k, w),
         array_agg(dh ORDER BY l, k, w), array_agg(ds ORDER BY l, k, w)
  INTO ids, keys, windows, held_off, settled_on
  FROM (
    SELECT ch.limit_id AS l, ch.scope_key AS k, ch.window_start AS w,
           sum(CASE WHEN p.kind IN ('settle', 'release', 'expire') THEN ch.amount ELSE 0 END) AS dh,
           sum(CASE
             WHEN p.kind = 'release' THEN 0
             WHEN p.kind = 'expire' OR ch.measure = 'c' THEN
               CASE WHEN p.kind = 'overrun_after_expiry' THEN 0 ELSE ch.amount END
             WHEN p.kind = 'overrun_after_expiry' THEN greatest(a.actual - ch.amount, 0)
             ELSE a.actual END) AS ds
    FROM jsonb_array_elements(applies) AS x(r)
    CROSS JOIN LATERAL (SELECT r->>'kind' AS kind) AS p
    CROSS JOIN LATERAL jsonb_populate_recordset(NULL::reservation_charge, r->'charges') AS ch
    -- The actual in the charge's measure: units for units, micros for money.
    CROSS JOIN LATERAL (SELECT coalesce((r->>CASE WHEN ch.measure = 'm' THEN 'money' ELSE 'actual' END)::bigint, 0) AS actual) AS a
    WHERE ch.limit_id IS NOT NULL
    GROUP BY 1, 2, 3
  ) per_counter;
  IF ids IS NOT NULL THEN
    PERFORM 1 FROM counters u
    JOIN unnest(ids, keys, windows) AS d(l, k, w) ON u.limit_id = d.l AND u.scope_key = d.k AND u.window_start = d.w
    ORDER BY u.limit_id, u.scope_key, u.window_start
    FOR UPDATE OF u;
    UPDATE counters u SET held = u.held - d.dh, settled = u.settled + d.ds
    FROM unnest(ids, keys, windows, held_off, settled_on) AS d(l, k, w, dh, ds)
    WHERE u.limit_id = d.l AND u.scope_key = d.k AND u.window_start = d.w;
  END IF;
END $$;
