-- reserve_set for SQL callers that speak JSON: a JSON array of requests in, a JSON array of
-- answers out, one per request in order. Guarantees and lock order: those of reserve_set.
--
-- Input: [{endpoint, amount, caller?, destination?, destinationKey?, idempotencyKey?, ttlSeconds?, requestId?}]
-- Output: {status: granted, replay, reservationId, expiresAt, remaining: [{ceilingId, metric,
-- scope, window, windowEnd, limit, used, remaining}]} | {status: refused, gate, message,
-- ceilingId?, limit?, used?, remaining?, retryAt?} | {status: resolved, replay, reservationId,
-- state, message} | {status: error, code, message, reservationId?}. An element that is not a
-- request (request_error) is an error for itself; the rest are decided by reserve_set.
-- `compact` is kept so calls written for contract version 5 still resolve; its answer was the
-- TypeScript library's own format, which now calls reserve_set, so asking for it is an error.
CREATE OR REPLACE FUNCTION ceilings.reserve_batch(requests jsonb, compact boolean DEFAULT false) RETURNS jsonb
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  shape jsonb[];
  result jsonb;
BEGIN
  IF jsonb_typeof(requests) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'reserve_batch expects a JSON array' USING ERRCODE = '22023';
  END IF;
  IF compact THEN
    RAISE EXCEPTION 'reserve_batch: compact answers are gone since contract version 6; call ceilings.reserve_set (arrays in, rows out)'
      USING ERRCODE = '22023';
  END IF;
  IF jsonb_array_length(requests) = 0 THEN RETURN '[]'::jsonb; END IF;
  SELECT array_agg(ceilings.request_error(r.el) ORDER BY r.o) INTO shape
  FROM jsonb_array_elements(requests) WITH ORDINALITY AS r(el, o);

  -- A malformed element goes in as a request for no endpoint (decided an error, charging
  -- nothing) and is answered with its own error.
  WITH input AS (
    SELECT array_agg(CASE WHEN shape[r.o] IS NULL THEN r.el->>'endpoint' END ORDER BY r.o) AS endpoint,
           array_agg(CASE WHEN shape[r.o] IS NULL THEN (r.el->>'amount')::bigint ELSE 1 END ORDER BY r.o) AS amount,
           array_agg(CASE WHEN shape[r.o] IS NULL THEN r.el->>'caller' END ORDER BY r.o) AS caller,
           array_agg(CASE WHEN shape[r.o] IS NULL THEN r.el->>'destination' END ORDER BY r.o) AS destination,
           array_agg(CASE WHEN shape[r.o] IS NULL THEN r.el->>'destinationKey' END ORDER BY r.o) AS destination_key,
           array_agg(CASE WHEN shape[r.o] IS NULL THEN r.el->>'idempotencyKey' END ORDER BY r.o) AS idempotency_key,
           array_agg(CASE WHEN shape[r.o] IS NULL THEN (r.el->>'ttlSeconds')::int END ORDER BY r.o) AS ttl,
           array_agg(CASE WHEN shape[r.o] IS NULL THEN r.el->>'requestId' END ORDER BY r.o) AS request_id
    FROM jsonb_array_elements(requests) WITH ORDINALITY AS r(el, o)
  ), decided AS (
    SELECT d.* FROM input,
      LATERAL ceilings.reserve_set(input.endpoint, input.amount, input.caller, input.destination, input.destination_key,
                                   input.idempotency_key, input.ttl, input.request_id) d
  ), remaining AS (
    SELECT d.i, jsonb_agg(jsonb_build_object('ceilingId', d.ceiling_id, 'metric', d.metric, 'scope', d.scope,
             'window', d.ceiling_window, 'windowEnd', d.retry_at, 'limit', d.lim, 'used', d.used, 'remaining', d.remaining)
             ORDER BY d.ceiling_id) AS list
    FROM decided d WHERE d.status = 'charge' GROUP BY d.i
  )
  SELECT jsonb_agg(coalesce(shape[a.i], CASE a.status
           WHEN 'granted' THEN jsonb_build_object('status', 'granted', 'replay', a.replay, 'reservationId', a.reservation_id,
             'expiresAt', a.expires_at, 'remaining', coalesce(m.list, '[]'::jsonb))
           WHEN 'resolved' THEN jsonb_build_object('status', 'resolved', 'replay', true, 'reservationId', a.reservation_id,
             'state', a.state, 'message', a.message)
           WHEN 'error' THEN jsonb_strip_nulls(jsonb_build_object('status', 'error', 'code', a.code, 'message', a.message,
             'reservationId', a.reservation_id))
           ELSE jsonb_strip_nulls(jsonb_build_object('status', 'refused', 'gate', a.code, 'ceilingId', a.ceiling_id,
             'limit', a.lim, 'used', a.used, 'remaining', a.remaining, 'retryAt', a.retry_at, 'message', a.message)) END)
         ORDER BY a.i)
  INTO result
  FROM decided a LEFT JOIN remaining m ON m.i = a.i
  WHERE a.status <> 'charge';
  RETURN result;
END $$;
