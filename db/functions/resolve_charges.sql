-- Guarantees: applies resolutions to every counter the reservations charged, in the window each
-- reservation was made in (the charge names it), so a late settle never lands in a later window.
-- applies: [{charges, kind, actual, money}], one per resolution (a settle, a release, a sweep).
-- A ceiling's charge ({c, k, w, n, m}) counts units or calls; a budget's ({b, k, w, n}) counts
-- money in micros: its n is the money reserved and actual_money the money of the actual parts.
--   settle:                held -> settled at the actual units (money); calls stay counted
--   release:               held given back, units, the call and the money
--   expire:                held -> settled in full (the safe direction)
--   overrun_after_expiry:  an expired reservation's actual above its amount (or money): the
--                          difference is added (the call was counted at expiry)
--   overrun_after_release: a released reservation settled above its amount after all: the
--                          actual units, the call and the actual money are counted again
-- Set-based: the charges of every resolution are summed per distinct counter (every change is an
-- addition, so the sum is what one update per charge would leave) and each counter is updated
-- once. The sweeper resolves 500 reservations at a time and resolve_batch up to 128 settles and
-- releases, most of them on the same hot counters: one update per counter, not per charge, so the
-- rows reservations wait on are held for a moment, not for the whole batch, and a row updated
-- once leaves one new version, not one per charge.
-- Lock order: usage rows by (ceiling id, scope key, window start), then budget_usage rows by
-- (budget id, scope key, window start): the order reserve_batch uses. Each set is locked by one
-- SELECT ... ORDER BY ... FOR UPDATE (rows lock in the order they come out of the sort) before
-- its one UPDATE.
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

  SELECT array_agg(c ORDER BY c, k, w), array_agg(k ORDER BY c, k, w), array_agg(w ORDER BY c, k, w),
         array_agg(dh ORDER BY c, k, w), array_agg(ds ORDER BY c, k, w)
  INTO ids, keys, windows, held_off, settled_on
  FROM (
    SELECT (ch->>'c')::int AS c, ch->>'k' AS k, (ch->>'w')::timestamptz AS w,
           sum(CASE WHEN p.kind IN ('settle', 'release', 'expire') THEN (ch->>'n')::bigint ELSE 0 END) AS dh,
           sum(CASE
             WHEN p.kind = 'release' THEN 0
             WHEN p.kind = 'settle' AND ch->>'m' = 'u' THEN p.actual
             WHEN p.kind = 'overrun_after_expiry' THEN CASE WHEN ch->>'m' = 'u' THEN greatest(p.actual - (ch->>'n')::bigint, 0) ELSE 0 END
             WHEN p.kind = 'overrun_after_release' THEN CASE WHEN ch->>'m' = 'u' THEN p.actual ELSE (ch->>'n')::bigint END
             ELSE (ch->>'n')::bigint END) AS ds
    FROM jsonb_array_elements(applies) AS a(r)
    CROSS JOIN LATERAL (SELECT r->>'kind' AS kind, coalesce((r->>'actual')::bigint, 0) AS actual) AS p
    CROSS JOIN LATERAL jsonb_array_elements(r->'charges') AS x(ch)
    WHERE ch ? 'c'
    GROUP BY 1, 2, 3
  ) per_counter;
  IF ids IS NOT NULL THEN
    PERFORM 1 FROM usage u
    JOIN unnest(ids, keys, windows) AS d(c, k, w) ON u.ceiling_id = d.c AND u.scope_key = d.k AND u.window_start = d.w
    ORDER BY u.ceiling_id, u.scope_key, u.window_start
    FOR UPDATE OF u;
    UPDATE usage u SET held = u.held - d.dh, settled = u.settled + d.ds
    FROM unnest(ids, keys, windows, held_off, settled_on) AS d(c, k, w, dh, ds)
    WHERE u.ceiling_id = d.c AND u.scope_key = d.k AND u.window_start = d.w;
  END IF;

  SELECT array_agg(b ORDER BY b, k, w), array_agg(k ORDER BY b, k, w), array_agg(w ORDER BY b, k, w),
         array_agg(dh ORDER BY b, k, w), array_agg(ds ORDER BY b, k, w)
  INTO ids, keys, windows, held_off, settled_on
  FROM (
    SELECT (ch->>'b')::int AS b, ch->>'k' AS k, (ch->>'w')::timestamptz AS w,
           sum(CASE WHEN p.kind IN ('settle', 'release', 'expire') THEN (ch->>'n')::bigint ELSE 0 END) AS dh,
           sum(CASE p.kind
             WHEN 'release' THEN 0
             WHEN 'settle' THEN p.actual_money
             WHEN 'overrun_after_expiry' THEN greatest(p.actual_money - (ch->>'n')::bigint, 0)
             WHEN 'overrun_after_release' THEN p.actual_money
             ELSE (ch->>'n')::bigint END) AS ds
    FROM jsonb_array_elements(applies) AS a(r)
    CROSS JOIN LATERAL (SELECT r->>'kind' AS kind, coalesce((r->>'money')::bigint, 0) AS actual_money) AS p
    CROSS JOIN LATERAL jsonb_array_elements(r->'charges') AS x(ch)
    WHERE ch ? 'b'
    GROUP BY 1, 2, 3
  ) per_counter;
  IF ids IS NOT NULL THEN
    PERFORM 1 FROM budget_usage u
    JOIN unnest(ids, keys, windows) AS d(b, k, w) ON u.budget_id = d.b AND u.scope_key = d.k AND u.window_start = d.w
    ORDER BY u.budget_id, u.scope_key, u.window_start
    FOR UPDATE OF u;
    UPDATE budget_usage u SET held = u.held - d.dh, settled = u.settled + d.ds
    FROM unnest(ids, keys, windows, held_off, settled_on) AS d(b, k, w, dh, ds)
    WHERE u.budget_id = d.b AND u.scope_key = d.k AND u.window_start = d.w;
  END IF;
END $$;
