-- Billing windows follow the provider's invoice. Arithmetic is done on UTC wall-clock timestamps so
-- the session's TimeZone (and its daylight saving) can never stretch or shrink a day.
-- One SQL query returning a set of one row, not PL/pgSQL: every caller reads it in FROM, where the
-- planner inlines it, so reserve_batch computes each ceiling's window with no function call (a
-- PL/pgSQL call set its expressions up again in every transaction, for every ceiling).
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.window_bounds(w ceiling_window, billing_day int, window_seconds int, at timestamptz)
RETURNS TABLE (window_start timestamptz, window_end timestamptz)
LANGUAGE sql STABLE AS $$
  SELECT CASE w WHEN 'utc_day' THEN d.day AT TIME ZONE 'UTC'
                WHEN 'billing_month' THEN (d.month + make_interval(days => billing_day - 1)) AT TIME ZONE 'UTC'
                ELSE at END,
         CASE w WHEN 'utc_day' THEN (d.day + interval '1 day') AT TIME ZONE 'UTC'
                WHEN 'billing_month' THEN (d.month + interval '1 month' + make_interval(days => billing_day - 1)) AT TIME ZONE 'UTC'
                ELSE at + make_interval(secs => window_seconds) END
  -- month: the start of the UTC month the billing month began in (the one before, before its day)
  FROM (SELECT date_trunc('day', u.utc) AS day,
               date_trunc('month', u.utc) - CASE WHEN extract(day FROM u.utc) < billing_day THEN interval '1 month' ELSE interval '0' END AS month
        FROM (SELECT at AT TIME ZONE 'UTC' AS utc) u) d
$$;
