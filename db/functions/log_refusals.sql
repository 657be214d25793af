-- Guarantees: stores refusals, folding identical ones (endpoint, gate, caller, destination, and the
-- budget that refused, so each budget keeps its own) within
-- a 10-second bucket into one row with a count, so a flood of refusals stays a bounded number of
-- writes; and counts each into refusal_hourly and refusal_daily in the same statement. The refusals INSERT's
-- RETURNING gives the row each refusal was folded into, and the rollup counts the refusal under
-- that row's endpoint_id and the UTC hour of that row's `at` (its first time). A fold never crosses
-- an hour (buckets are 10 s and `at` is in the bucket), so the chart from the rollup and the chart
-- from the raw rows agree exactly, and an endpoint filter (on endpoint_id) matches the same rows.
-- Input: [{endpointId, endpointKey, ceilingId, budgetId, gate, caller, destination, amount, remaining, requestId, detail}]
-- The daily rows are the hourly ones summed by UTC day, so charts with day bars read 24 times fewer.
-- Lock order: refusals rows by (endpoint key, gate, caller, destination, budget), then refusal_daily rows
-- by (day, endpoint key, gate, endpoint id), then refusal_hourly rows by (hour, endpoint key, gate,
-- endpoint id): every batch runs this one statement, whose plan upserts them in that order (the
-- main INSERT pulls first; the hourly INSERT, referenced by nothing, runs to completion after it).
-- PL/pgSQL, not SQL: a SQL function with SET is never inlined, and its statement was parsed and
-- planned again on every call, 400 µs of a batch of 32 refusals (more than the statement itself);
-- here the plan is made once per session.
CREATE OR REPLACE FUNCTION ceilings.log_refusals(items jsonb) RETURNS void
LANGUAGE plpgsql SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  WITH logged AS (
    INSERT INTO refusals AS f (bucket, endpoint_id, endpoint_key, ceiling_id, budget_id, gate, caller, destination,
                               amount, remaining, count, request_id, detail)
    SELECT to_timestamp(floor(extract(epoch FROM now()) / 10) * 10),
           min((x->>'endpointId')::int), x->>'endpointKey', min((x->>'ceilingId')::int), (x->>'budgetId')::int,
           (x->>'gate')::refusal_gate, coalesce(x->>'caller', ''), coalesce(x->>'destination', ''),
           max((x->>'amount')::bigint), min((x->>'remaining')::bigint), count(*),
           max(x->>'requestId'), max(x->>'detail')
    FROM jsonb_array_elements(items) AS x
    GROUP BY x->>'endpointKey', x->>'gate', coalesce(x->>'caller', ''), coalesce(x->>'destination', ''), (x->>'budgetId')::int
    -- A fixed order so two batches upserting the same rows cannot deadlock: the unique key's.
    ORDER BY 3, 6, 7, 8, coalesce((x->>'budgetId')::int, 0)
    ON CONFLICT (endpoint_key, gate, caller, destination, bucket, (coalesce(budget_id, 0))) DO UPDATE
      SET count = f.count + excluded.count,
          last_at = now(),
          amount = excluded.amount,
          remaining = excluded.remaining,
          ceiling_id = coalesce(excluded.ceiling_id, f.ceiling_id)
    RETURNING f.endpoint_id, f.endpoint_key, f.gate, f.caller, f.destination, coalesce(f.budget_id, 0) AS budget, f.at
  ), added AS (
    -- How many refusals of this batch went into each row (RETURNING gives the row's total).
    SELECT x->>'endpointKey' AS endpoint_key, (x->>'gate')::refusal_gate AS gate,
           coalesce(x->>'caller', '') AS caller, coalesce(x->>'destination', '') AS destination,
           coalesce((x->>'budgetId')::int, 0) AS budget, count(*) AS n
    FROM jsonb_array_elements(items) AS x
    GROUP BY 1, 2, 3, 4, 5
  ), counted AS (
    SELECT date_trunc('hour', l.at, 'UTC') AS hour, l.endpoint_id, l.endpoint_key, l.gate, sum(a.n) AS n
    FROM logged l JOIN added a USING (endpoint_key, gate, caller, destination, budget)
    GROUP BY 1, 2, 3, 4
  ), hourly AS (
    INSERT INTO refusal_hourly AS h (hour, endpoint_id, endpoint_key, gate, count)
    SELECT hour, endpoint_id, endpoint_key, gate, n FROM counted
    -- The key's order, so concurrent batches take the rollup's row locks in one order: no deadlock.
    ORDER BY 1, 3, 4, 2
    ON CONFLICT (hour, endpoint_key, gate, endpoint_id) DO UPDATE
      SET count = h.count + excluded.count
  )
  INSERT INTO refusal_daily AS d (day, endpoint_id, endpoint_key, gate, count)
  SELECT date_trunc('day', hour, 'UTC'), endpoint_id, endpoint_key, gate, sum(n) FROM counted
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 3, 4, 2
  ON CONFLICT (day, endpoint_key, gate, endpoint_id) DO UPDATE
    SET count = d.count + excluded.count;
END $$;
