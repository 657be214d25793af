-- What reserve_batch_arrays reads of an endpoint before it decides, computed from the tables as of
-- now and kept in endpoint_config_cache for the batches after it (phase 2 of reserve_batch_arrays):
-- whether the endpoint has a gate or an answer of its own (handed_over: unknown or archived, several
-- parts, a throttle, no limit, a limit per destination, a limit at 0), its per-call max, its one
-- part's price (picos a unit, and as {name: picos}, what a reservation keeps), and its limits by
-- position (its ceilings by id, then its budgets by id, as decide_batch numbers them) with their
-- current windows, alert thresholds (a global limit's; [] for a per-account one) and answer parts.
-- Kept only when no gate is the endpoint's own, for as long as every window holds (the latest start
-- to the earliest end), until a change forgets it (lock_endpoints_for_change). Reading an endpoint
-- this way took a lone call on three ceilings 614,000 instructions of 2.9 million; the kept row is
-- one index probe.
-- SECURITY DEFINER, for the write alone: the app role reads the kept rows and cannot write them, so
-- a row is always this function's reading of the tables (a row written by hand would be a limit no
-- page shows). It reads the time itself and takes the endpoint's lock: a row it keeps was read under
-- the lock after every change committed before it, and a change after waits for its transaction.
-- Locks: the endpoint's advisory lock, shared (1; a batch holds it already: no wait), then the
-- kept row when it writes it (an ended row updated, or a new one inserted: a batch that missed at
-- the same moment waits at the insert for the first one's commit, which holds nothing it waits for).
CREATE OR REPLACE FUNCTION ceilings.endpoint_config(endpoint_id int)
RETURNS TABLE (handed_over boolean, per_call_max bigint, unit_price numeric, prices jsonb, limit_ids int[], limit_scope text[],
  limit_measure text[], limit_value bigint[], limit_start timestamptz[], limit_end timestamptz[], limit_thresholds jsonb, entries jsonb)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  t_now timestamptz := now();
  cooldown boolean;
  v_from timestamptz;   -- the kept row's windows: from the latest start to the earliest end
  v_until timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(endpoint_config.endpoint_id));
  -- An aggregate over the parts was 31,000 instructions: one part is the common endpoint's, and
  -- several hand the batch over.
  SELECT s.archived_at IS NOT NULL OR jsonb_array_length(s.parts) > 1 OR s.throttle_per_minute IS NOT NULL
           OR l.ids IS NULL OR 'd' = ANY (l.scopes) OR 0 = ANY (l.vals),
         l.cooldown, s.per_call_max, (s.parts->0->>'pricePico')::numeric,
         jsonb_build_object(s.parts->0->>'name', (s.parts->0->>'pricePico')::bigint),
         l.ids, l.scopes, l.measures, l.vals, l.starts, l.ends, l.thresholds, l.entries
  INTO endpoint_config.handed_over, cooldown, endpoint_config.per_call_max, endpoint_config.unit_price, endpoint_config.prices,
       endpoint_config.limit_ids, endpoint_config.limit_scope, endpoint_config.limit_measure, endpoint_config.limit_value,
       endpoint_config.limit_start, endpoint_config.limit_end, endpoint_config.limit_thresholds, endpoint_config.entries
  FROM endpoints s,
       LATERAL (SELECT array_agg(q.limit_id) AS ids, array_agg(q.scope) AS scopes, array_agg(q.measure) AS measures,
                       array_agg(q.value) AS vals, array_agg(q.window_start) AS starts, array_agg(q.window_end) AS ends,
                       jsonb_agg(q.thresholds) AS thresholds, jsonb_agg(q.entry) AS entries, bool_or(q.cooldown) AS cooldown
                FROM (SELECT 0 AS kind, c.id, c.limit_id, CASE c.scope WHEN 'global' THEN 'g' WHEN 'caller' THEN 'a' ELSE 'd' END AS scope,
                             CASE c.metric WHEN 'calls' THEN 'c' ELSE 'u' END AS measure, c.value, b.window_start, b.window_end,
                             CASE WHEN c.scope = 'global' THEN to_jsonb(c.alert_thresholds) ELSE '[]' END AS thresholds,
                             jsonb_build_object('ceilingId', c.id, 'metric', c.metric, 'scope', c.scope, 'window', c.window,
                               'windowEnd', CASE WHEN c.window <> 'first_hit' THEN b.window_end END) AS entry,
                             c.window = 'first_hit' AS cooldown
                      FROM ceilings c
                      CROSS JOIN LATERAL ceilings.window_bounds(c.window, s.billing_day, c.window_seconds, t_now) b
                      WHERE c.endpoint_id = s.id
                      UNION ALL
                      SELECT 1, g.id, g.limit_id, CASE g.scope WHEN 'account' THEN 'a' ELSE 'g' END, 'm', g.value, w.window_start, w.window_end,
                             CASE WHEN g.scope = 'global' THEN to_jsonb(g.alert_thresholds) ELSE '[]' END,
                             jsonb_build_object('budgetId', g.id, 'budget', g.key, 'metric', 'money', 'currency', g.currency,
                               'scope', g.scope, 'window', g.window, 'windowEnd', w.window_end),
                             false
                      FROM budgets g
                      CROSS JOIN LATERAL ceilings.window_bounds(g.window, g.billing_day, NULL, t_now) w
                      WHERE g.archived_at IS NULL AND g.id IN (SELECT m.budget_id FROM budget_members m WHERE m.endpoint_id = s.id)
                      ORDER BY 1, 2) q) l
  WHERE s.id = endpoint_config.endpoint_id;
  -- Kept only as read in READ COMMITTED, where this statement's snapshot was taken after the lock:
  -- a transaction of REPEATABLE READ or SERIALIZABLE reads by an older snapshot, and its reading,
  -- kept, would outlive a change committed since. A cooldown's window starts at each call (it is a
  -- destination's, so handed over already).
  IF NOT coalesce(endpoint_config.handed_over, true) AND NOT cooldown AND current_setting('transaction_isolation') = 'read committed' THEN
    -- A row whose windows have ended is replaced, one kept for the current windows stands (another
    -- batch read the same configuration), and one for later windows too (this transaction's time is
    -- older than the batch that kept it). The update passes over a current row without locking it;
    -- the insert waits only for another batch's insert of the same row.
    SELECT max(x) INTO v_from FROM unnest(endpoint_config.limit_start) x;
    SELECT min(x) INTO v_until FROM unnest(endpoint_config.limit_end) x;
    UPDATE endpoint_config_cache k
    SET valid_from = v_from, valid_until = v_until,
        per_call_max = endpoint_config.per_call_max, unit_price = endpoint_config.unit_price, prices = endpoint_config.prices,
        limit_ids = endpoint_config.limit_ids, limit_scope = endpoint_config.limit_scope, limit_measure = endpoint_config.limit_measure,
        limit_value = endpoint_config.limit_value, limit_start = endpoint_config.limit_start, limit_end = endpoint_config.limit_end,
        limit_thresholds = endpoint_config.limit_thresholds, entries = endpoint_config.entries
    WHERE k.id = endpoint_config.endpoint_id AND k.valid_until <= t_now;
    IF NOT FOUND THEN
      INSERT INTO endpoint_config_cache
      VALUES (endpoint_config.endpoint_id, v_from, v_until, endpoint_config.per_call_max, endpoint_config.unit_price,
              endpoint_config.prices, endpoint_config.limit_ids, endpoint_config.limit_scope, endpoint_config.limit_measure,
              endpoint_config.limit_value, endpoint_config.limit_start, endpoint_config.limit_end, endpoint_config.limit_thresholds,
              endpoint_config.entries)
      ON CONFLICT (id) DO NOTHING;
    END IF;
  END IF;
  RETURN NEXT;
END $$;
