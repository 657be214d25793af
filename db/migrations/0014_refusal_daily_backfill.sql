-- refusal_daily starts as refusal_hourly summed by UTC day. The lock waits for transactions still
-- logging refusals under the previous log_refusals (which kept only the hourly rows) and holds new
-- ones, which already count into refusal_daily, until this commits: none is counted twice or missed.
LOCK TABLE refusals IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
INSERT INTO refusal_daily (day, endpoint_id, endpoint_key, gate, count)
SELECT date_trunc('day', hour, 'UTC'), endpoint_id, endpoint_key, gate, sum(count)
FROM refusal_hourly
GROUP BY 1, 2, 3, 4;
