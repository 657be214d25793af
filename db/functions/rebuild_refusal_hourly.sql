-- Recounts refusal_hourly and refusal_daily from the refusal rows: after a bulk load that bypassed
-- log_refusals (scripts/db-fill.ts) and on upgrade. The SHARE ROW EXCLUSIVE lock waits for transactions that
-- are logging refusals and holds new ones until commit, so none is counted twice or missed.
-- Lock order: refusals table SHARE ROW EXCLUSIVE, then refusal_daily and refusal_hourly rows.
-- Returns the number of hourly rows.
CREATE OR REPLACE FUNCTION ceilings.rebuild_refusal_hourly() RETURNS bigint
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  n bigint;
BEGIN
  LOCK TABLE refusals IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM refusal_hourly;
  INSERT INTO refusal_hourly (hour, endpoint_id, endpoint_key, gate, count)
  SELECT date_trunc('hour', at, 'UTC'), endpoint_id, endpoint_key, gate, sum(count)
  FROM refusals
  GROUP BY 1, 2, 3, 4;
  GET DIAGNOSTICS n = ROW_COUNT;
  DELETE FROM refusal_daily;
  INSERT INTO refusal_daily (day, endpoint_id, endpoint_key, gate, count)
  SELECT date_trunc('day', hour, 'UTC'), endpoint_id, endpoint_key, gate, sum(count)
  FROM refusal_hourly
  GROUP BY 1, 2, 3, 4;
  RETURN n;
END $$;
