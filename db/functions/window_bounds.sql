-- Billing windows follow the provider's invoice. Arithmetic is done on UTC wall-clock timestamps so
-- the session's TimeZone (and its daylight saving) can never stretch or shrink a day.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.window_bounds(
  w ceiling_window, billing_day int, window_seconds int, at timestamptz,
  OUT window_start timestamptz, OUT window_end timestamptz
) LANGUAGE plpgsql STABLE AS $$
DECLARE
  utc timestamp := at AT TIME ZONE 'UTC';
  base timestamp;
BEGIN
  IF w = 'utc_day' THEN
    window_start := date_trunc('day', utc) AT TIME ZONE 'UTC';
    window_end := (date_trunc('day', utc) + interval '1 day') AT TIME ZONE 'UTC';
  ELSIF w = 'billing_month' THEN
    base := date_trunc('month', utc);
    IF extract(day FROM utc) < billing_day THEN
      base := base - interval '1 month';
    END IF;
    window_start := (base + make_interval(days => billing_day - 1)) AT TIME ZONE 'UTC';
    window_end := (base + interval '1 month' + make_interval(days => billing_day - 1)) AT TIME ZONE 'UTC';
  ELSE
    window_start := at;
    window_end := at + make_interval(secs => window_seconds);
  END IF;
END $$;
