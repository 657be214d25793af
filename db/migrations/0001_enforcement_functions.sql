-- The enforcement contract, callable from any language on this database. The TypeScript library
-- and the HTTP API call these same functions: one implementation behind all three.
CREATE SCHEMA IF NOT EXISTS ceilings;
--> statement-breakpoint

-- Billing windows follow the provider's invoice. Arithmetic is done on UTC wall-clock timestamps so
-- the session's TimeZone (and its daylight saving) can never stretch or shrink a day.
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
--> statement-breakpoint

-- Fallback canonical key for SQL callers that pass only the raw destination. The TypeScript
-- library canonicalises fully (plus-tags, provider dots, phone numbers) and passes destinationKey.
CREATE OR REPLACE FUNCTION ceilings.canonical_destination(raw text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT nullif(lower(btrim(raw)), '')
$$;
--> statement-breakpoint

-- Stores refusals, folding identical ones (endpoint, gate, caller, destination) within a
-- 10-second bucket into one row with a count: a flood of refusals stays a bounded number of writes.
-- Input: [{endpointId, endpointKey, ceilingId, gate, caller, destination, amount, remaining, requestId, detail}]
CREATE OR REPLACE FUNCTION ceilings.log_refusals(items jsonb) RETURNS void
LANGUAGE sql SET search_path = public, pg_temp AS $$
  INSERT INTO refusals AS f (bucket, endpoint_id, endpoint_key, ceiling_id, gate, caller, destination,
                             amount, remaining, count, request_id, detail)
  SELECT to_timestamp(floor(extract(epoch FROM now()) / 10) * 10),
         min((x->>'endpointId')::int), x->>'endpointKey', min((x->>'ceilingId')::int),
         (x->>'gate')::refusal_gate, coalesce(x->>'caller', ''), coalesce(x->>'destination', ''),
         max((x->>'amount')::bigint), min((x->>'remaining')::bigint), count(*),
         max(x->>'requestId'), max(x->>'detail')
  FROM jsonb_array_elements(items) AS x
  GROUP BY x->>'endpointKey', x->>'gate', coalesce(x->>'caller', ''), coalesce(x->>'destination', '')
  -- A fixed order so two batches upserting the same rows cannot deadlock.
  ORDER BY 3, 5, 6, 7
  ON CONFLICT (endpoint_key, gate, caller, destination, bucket) DO UPDATE
    SET count = f.count + excluded.count,
        last_at = now(),
        amount = excluded.amount,
        remaining = excluded.remaining,
        ceiling_id = coalesce(excluded.ceiling_id, f.ceiling_id)
$$;
--> statement-breakpoint

-- Edits of ceilings and reservation batches meet on one lock per endpoint: batches take it shared,
-- edits exclusive. Row locks alone (FOR SHARE against FOR UPDATE) let a stream of batches starve a
-- kill; the lock manager queues a waiting exclusive request ahead of later shared ones, so a kill
-- waits only for the batches already in flight and binds the next one.
CREATE OR REPLACE FUNCTION ceilings.endpoint_lock_key(endpoint_id int) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT (x'43454c00'::bigint << 24) + endpoint_id
$$;
--> statement-breakpoint

-- Call inside the transaction that changes ceilings (values, kill, restore, overrides), before
-- locking their rows. Sorted, so concurrent edits of several endpoints cannot deadlock.
CREATE OR REPLACE FUNCTION ceilings.lock_endpoints_for_change(endpoint_ids int[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  ep int;
BEGIN
  FOR ep IN SELECT DISTINCT u FROM unnest(endpoint_ids) u WHERE u IS NOT NULL ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(ceilings.endpoint_lock_key(ep));
  END LOOP;
END $$;
--> statement-breakpoint

-- Records a threshold crossing once per ceiling, window and percent, and queues its deliveries in
-- the same transaction (the outbox), so a crash between firing and sending loses nothing.
CREATE OR REPLACE FUNCTION ceilings.fire_alert(
  p_kind text, p_dedupe text, p_endpoint int, p_ceiling int, p_window timestamptz, p_message text, p_details jsonb
) RETURNS boolean
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  new_id int;
BEGIN
  INSERT INTO alerts (kind, dedupe_key, endpoint_id, ceiling_id, window_start, message, details)
  VALUES (p_kind, p_dedupe, p_endpoint, p_ceiling, p_window, p_message, p_details)
  ON CONFLICT (dedupe_key) DO NOTHING
  RETURNING id INTO new_id;
  IF new_id IS NULL THEN
    RETURN false;
  END IF;
  INSERT INTO alert_deliveries (alert_id, destination_id)
  SELECT new_id, d.id FROM alert_destinations d WHERE d.enabled ORDER BY d.id;
  RETURN true;
END $$;
--> statement-breakpoint

-- Decides a batch of reservation requests in arrival order, in one transaction:
--   1. read endpoints; take their endpoint locks shared and their ceilings FOR SHARE (an edit takes
--      both exclusively, so it waits for batches in flight and binds the next one: the kill switch
--      is exact);
--   2. validate, then the cheap gates: per-call max, kill switch, per-account block, throttle;
--   3. lock every counter the batch needs, in one fixed order (no deadlocks), and decide each
--      request all-or-nothing against the live values; a refusal charges nothing;
--   4. write reservations, then counters once each, then alerts and refusals.
-- Input: [{endpoint, amount, caller?, destination?, destinationKey?, idempotencyKey?, ttlSeconds?, requestId?}]
-- Output, one per input in order: {status: granted|refused|error, ...}.
-- compact (the TypeScript library): a grant carries "rc": [from, to] instead of "remaining", and
-- the answer is {answers, rcCounter, rcLimit, rcUsed, counters}, from which the caller builds
-- "remaining" itself: formatting JSON is most of a batch's cost, and here it runs under the locks.
CREATE OR REPLACE FUNCTION ceilings.reserve_batch(requests jsonb, compact boolean DEFAULT false) RETURNS jsonb
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  n int := jsonb_array_length(requests);
  t_now timestamptz := now();
  results jsonb[] := array_fill(NULL::jsonb, ARRAY[n]);
  eps endpoints[];
  cs ceilings[];
  cs_start timestamptz[];
  cs_end timestamptz[];
  ep endpoints;
  e endpoints;
  c ceilings;
  r jsonb;
  i int; j int; x int; idx int; q int;
  -- per request
  q_ep int[] := array_fill(0, ARRAY[n]);
  q_amount bigint[] := array_fill(0::bigint, ARRAY[n]);
  q_caller text[] := array_fill(''::text, ARRAY[n]);
  q_dest text[] := array_fill(NULL::text, ARRAY[n]);
  q_dest_key text[] := array_fill(NULL::text, ARRAY[n]);
  q_idem text[] := array_fill(NULL::text, ARRAY[n]);
  q_ttl int[] := array_fill(300, ARRAY[n]);
  q_request_id text[] := array_fill(NULL::text, ARRAY[n]);
  q_from int[] := array_fill(0, ARRAY[n]);
  q_to int[] := array_fill(-1, ARRAY[n]);
  -- per (request, ceiling) charge, in ceiling id order within a request
  rc_counter int[] := '{}';
  rc_ceiling int[] := '{}';
  rc_charge bigint[] := '{}';
  rc_limit bigint[] := '{}';
  -- per counter (ceiling, scope key, window)
  k_key text[] := '{}';
  k_ceiling int[] := '{}';
  k_scope text[] := '{}';
  k_start timestamptz[] := '{}';
  k_end timestamptz[] := '{}';
  k_seconds int[] := '{}';
  k_used bigint[] := '{}';
  k_delta bigint[] := '{}';
  k_grants bigint[] := '{}';
  -- the parts of a grant's answer and charges that are the same for every request on a counter
  k_answer jsonb[] := '{}';
  k_charge jsonb[] := '{}';
  rc_used bigint[];
  q_charges jsonb[] := array_fill(NULL::jsonb, ARRAY[n]);
  -- grants to write
  g_q int[] := '{}';
  g_id uuid[] := '{}';
  g_charges jsonb[] := '{}';
  g_expires timestamptz[] := '{}';
  refused jsonb := '[]';
  idem_seen jsonb := '{}';
  amount_txt text;
  v_caller text;
  v_limit bigint;
  overrides jsonb;
  v_key text;
  v_scope text;
  v_fail int;
  v_used bigint;
  v_rem jsonb;
  v_charges jsonb;
  v_id uuid;
  v_existing reservations;
  v_ttl_txt text;
  v_inserted uuid[];
  v_ws timestamptz;
  v_we timestamptz;
  v_attempts bigint;
  v_prev bigint;
  v_pct int;
  rec record;
BEGIN
  IF jsonb_typeof(requests) <> 'array' THEN
    RAISE EXCEPTION 'reserve_batch expects a JSON array' USING ERRCODE = '22023';
  END IF;
  IF n = 0 THEN
    RETURN '[]'::jsonb;
  END IF;

  SELECT coalesce(array_agg(s ORDER BY s.id), '{}') INTO eps
  FROM endpoints s
  WHERE s.key IN (SELECT el->>'endpoint' FROM jsonb_array_elements(requests) el);

  FOREACH e IN ARRAY eps LOOP
    PERFORM pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(e.id));
  END LOOP;

  SELECT coalesce(array_agg(l ORDER BY l.id), '{}') INTO cs
  FROM (SELECT * FROM ceilings WHERE endpoint_id IN (SELECT u.id FROM unnest(eps) u)
        ORDER BY id FOR SHARE) l;

  -- Per-account overrides of the batch's callers, read once (FOR SHARE: an edit waits for us).
  SELECT coalesce(jsonb_object_agg(o.ceiling_id || '|' || o.caller, o.value), '{}') INTO overrides
  FROM (SELECT ov.ceiling_id, ov.caller, ov.value FROM ceiling_overrides ov
        WHERE ov.ceiling_id IN (SELECT u.id FROM unnest(cs) u WHERE u.scope = 'caller')
          AND ov.caller IN (SELECT DISTINCT el->>'caller' FROM jsonb_array_elements(requests) el)
        ORDER BY ov.ceiling_id, ov.caller FOR SHARE) o;

  FOR x IN 1 .. coalesce(array_length(cs, 1), 0) LOOP
    c := cs[x];
    SELECT b.window_start, b.window_end INTO rec
    FROM endpoints s, ceilings.window_bounds(c.window, s.billing_day, c.window_seconds, t_now) b
    WHERE s.id = c.endpoint_id;
    cs_start[x] := rec.window_start;
    cs_end[x] := rec.window_end;
  END LOOP;

  -- Phase A: validation and the gates in front of the counters.
  FOR i IN 1 .. n LOOP
    r := requests -> (i - 1);
    ep := NULL;
    FOREACH e IN ARRAY eps LOOP
      IF e.key = r->>'endpoint' THEN ep := e; EXIT; END IF;
    END LOOP;
    IF ep.id IS NULL THEN
      results[i] := jsonb_build_object('status', 'error', 'code', 'unknown_endpoint',
        'message', format('unknown endpoint %L', r->>'endpoint'));
      CONTINUE;
    END IF;
    amount_txt := r->>'amount';
    IF jsonb_typeof(r->'amount') IS DISTINCT FROM 'number' OR amount_txt !~ '^[0-9]{1,16}$'
       OR amount_txt::numeric > 9007199254740991 OR amount_txt::bigint <= 0 THEN
      results[i] := jsonb_build_object('status', 'error', 'code', 'invalid_amount',
        'message', format('amount must be a positive whole number, got %s', coalesce(r->'amount', 'null'::jsonb)));
      CONTINUE;
    END IF;
    v_ttl_txt := coalesce(r->>'ttlSeconds', '300');
    IF v_ttl_txt !~ '^[0-9]{1,5}$' OR v_ttl_txt::int NOT BETWEEN 1 AND 86400 THEN
      results[i] := jsonb_build_object('status', 'error', 'code', 'invalid_ttl',
        'message', 'ttlSeconds must be a whole number between 1 and 86400');
      CONTINUE;
    END IF;
    q_ep[i] := ep.id;
    q_amount[i] := amount_txt::bigint;
    q_ttl[i] := v_ttl_txt::int;
    q_caller[i] := coalesce(nullif(btrim(r->>'caller'), ''), '');
    q_dest[i] := nullif(btrim(r->>'destination'), '');
    q_dest_key[i] := coalesce(nullif(btrim(r->>'destinationKey'), ''), ceilings.canonical_destination(r->>'destination'));
    q_idem[i] := nullif(r->>'idempotencyKey', '');
    q_request_id[i] := r->>'requestId';
    IF length(q_idem[i]) > 200 THEN
      results[i] := jsonb_build_object('status', 'error', 'code', 'invalid_idempotency_key',
        'message', 'idempotencyKey must be at most 200 characters');
      CONTINUE;
    END IF;

    FOREACH c IN ARRAY cs LOOP
      CONTINUE WHEN c.endpoint_id <> ep.id;
      IF c.scope = 'caller' AND q_caller[i] = '' THEN
        results[i] := jsonb_build_object('status', 'error', 'code', 'caller_required',
          'message', format('endpoint %s has a per-caller ceiling: caller is required', ep.key));
      ELSIF c.scope = 'destination' AND q_dest_key[i] IS NULL THEN
        results[i] := jsonb_build_object('status', 'error', 'code', 'destination_required',
          'message', format('endpoint %s has a cooldown: destination is required', ep.key));
      END IF;
    END LOOP;
    CONTINUE WHEN results[i] IS NOT NULL;

    -- A retry with a key already used returns that reservation, or a conflict if it differs.
    IF q_idem[i] IS NOT NULL THEN
      SELECT * INTO v_existing FROM reservations
      WHERE endpoint_id = ep.id AND caller = q_caller[i] AND idempotency_key = q_idem[i];
      IF FOUND THEN
        IF v_existing.amount = q_amount[i] AND v_existing.destination_key IS NOT DISTINCT FROM q_dest_key[i] THEN
          results[i] := jsonb_build_object('status', 'granted', 'replay', true,
            'reservationId', v_existing.id, 'expiresAt', v_existing.expires_at,
            'state', v_existing.state, 'remaining', '[]'::jsonb);
        ELSE
          results[i] := jsonb_build_object('status', 'error', 'code', 'idempotency_conflict',
            'message', 'this idempotency key was used with other parameters', 'reservationId', v_existing.id);
        END IF;
        CONTINUE;
      END IF;
    END IF;

    IF q_amount[i] > ep.per_call_max THEN
      results[i] := jsonb_build_object('status', 'refused', 'gate', 'per_call_max',
        'limit', ep.per_call_max, 'message', format('amount %s is above the per-call max of %s', q_amount[i], ep.per_call_max));
      CONTINUE;
    END IF;

    FOREACH c IN ARRAY cs LOOP
      IF c.endpoint_id = ep.id AND c.value = 0 THEN
        results[i] := jsonb_build_object('status', 'refused', 'gate', 'kill_switch', 'ceilingId', c.id,
          'limit', 0, 'remaining', 0, 'message', format('endpoint %s is switched off', ep.key));
        EXIT;
      END IF;
    END LOOP;
    CONTINUE WHEN results[i] IS NOT NULL;

    -- Throttle: soft and approximate (current minute plus the previous one, weighted by overlap).
    -- It counts every attempt that reaches it, refused or not.
    IF ep.throttle_per_minute IS NOT NULL AND q_caller[i] <> '' THEN
      BEGIN
        INSERT INTO throttle_counters AS tc (endpoint_id, caller, minute, attempts)
        VALUES (ep.id, q_caller[i], date_trunc('minute', t_now), 1)
        ON CONFLICT (endpoint_id, caller, minute) DO UPDATE SET attempts = tc.attempts + 1
        RETURNING attempts INTO v_attempts;
        SELECT coalesce(max(attempts), 0) INTO v_prev FROM throttle_counters
        WHERE endpoint_id = ep.id AND caller = q_caller[i] AND minute = date_trunc('minute', t_now) - interval '1 minute';
        IF v_attempts + v_prev * (60 - extract(second FROM t_now)) / 60 > ep.throttle_per_minute THEN
          results[i] := jsonb_build_object('status', 'refused', 'gate', 'throttle', 'limit', ep.throttle_per_minute,
            'message', format('more than %s requests a minute from this caller', ep.throttle_per_minute));
          CONTINUE;
        END IF;
      EXCEPTION WHEN lock_not_available THEN
        IF NOT ep.throttle_fail_open THEN
          results[i] := jsonb_build_object('status', 'refused', 'gate', 'unavailable', 'message', 'throttle unavailable');
          CONTINUE;
        END IF;
      END;
    END IF;

    -- The counters this request would charge, one per ceiling, in ceiling id order.
    q_from[i] := coalesce(array_length(rc_counter, 1), 0) + 1;
    FOR x IN 1 .. coalesce(array_length(cs, 1), 0) LOOP
      c := cs[x];
      CONTINUE WHEN c.endpoint_id <> ep.id;
      v_scope := CASE c.scope WHEN 'global' THEN '' WHEN 'caller' THEN q_caller[i] ELSE q_dest_key[i] END;
      v_limit := c.value;
      IF c.scope = 'caller' AND overrides ? (c.id || '|' || q_caller[i]) THEN
        v_limit := (overrides ->> (c.id || '|' || q_caller[i]))::bigint;
      END IF;
      v_key := c.id || '|' || v_scope || '|' || CASE WHEN c.window = 'first_hit' THEN '' ELSE extract(epoch FROM cs_start[x])::text END;
      idx := array_position(k_key, v_key);
      IF idx IS NULL THEN
        k_key := k_key || v_key;
        k_ceiling := k_ceiling || c.id;
        k_scope := k_scope || v_scope;
        k_start := k_start || CASE WHEN c.window = 'first_hit' THEN NULL ELSE cs_start[x] END;
        k_end := k_end || CASE WHEN c.window = 'first_hit' THEN NULL ELSE cs_end[x] END;
        k_seconds := k_seconds || c.window_seconds;
        k_used := k_used || 0::bigint;
        k_delta := k_delta || 0::bigint;
        k_grants := k_grants || 0::bigint;
        idx := array_length(k_key, 1);
      END IF;
      rc_counter := rc_counter || idx;
      rc_ceiling := rc_ceiling || x;
      rc_charge := rc_charge || CASE c.metric WHEN 'calls' THEN 1::bigint ELSE q_amount[i] END;
      rc_limit := rc_limit || v_limit;
    END LOOP;
    q_to[i] := coalesce(array_length(rc_counter, 1), 0);
  END LOOP;

  -- Phase B: lock the counters. Cooldowns (first_hit) are serialised per destination by an
  -- advisory lock so two first hits cannot both open a window; then rows are created if missing
  -- and locked, everything in (ceiling, scope key, window) order.
  FOR rec IN SELECT k.idx FROM unnest(k_ceiling, k_scope, k_seconds) WITH ORDINALITY AS k(c, s, secs, idx)
             WHERE k.secs IS NOT NULL ORDER BY k.c, hashtext(k.s), k.s LOOP
    idx := rec.idx;
    PERFORM pg_advisory_xact_lock(k_ceiling[idx], hashtext(k_scope[idx]));
    SELECT u.window_start, u.window_end INTO v_ws, v_we FROM usage u
    WHERE u.ceiling_id = k_ceiling[idx] AND u.scope_key = k_scope[idx] AND u.window_end > t_now
    ORDER BY u.window_start DESC LIMIT 1;
    IF FOUND THEN
      k_start[idx] := v_ws;
      k_end[idx] := v_we;
    ELSE
      k_start[idx] := t_now;
      k_end[idx] := t_now + make_interval(secs => k_seconds[idx]);
    END IF;
  END LOOP;

  -- Every window is known now. What does not depend on the counters' values is built before
  -- they are locked: the per-ceiling parts of answers (once per counter, not per request) and
  -- each request's charges, which settle, release and expiry replay later.
  FOR idx IN 1 .. coalesce(array_length(k_key, 1), 0) LOOP
    FOR x IN 1 .. array_length(cs, 1) LOOP
      CONTINUE WHEN cs[x].id <> k_ceiling[idx];
      k_answer[idx] := jsonb_build_object('ceilingId', cs[x].id, 'metric', cs[x].metric, 'scope', cs[x].scope,
        'window', cs[x].window, 'windowEnd', k_end[idx]);
      k_charge[idx] := jsonb_build_object('c', cs[x].id, 'k', k_scope[idx], 'w', k_start[idx],
        'm', CASE cs[x].metric WHEN 'calls' THEN 'c' ELSE 'u' END);
    END LOOP;
  END LOOP;
  FOR i IN 1 .. n LOOP
    CONTINUE WHEN results[i] IS NOT NULL;
    v_charges := '[]';
    FOR x IN q_from[i] .. q_to[i] LOOP
      v_charges := v_charges || (k_charge[rc_counter[x]] || jsonb_build_object('n', rc_charge[x]));
    END LOOP;
    q_charges[i] := v_charges;
  END LOOP;
  rc_used := array_fill(0::bigint, ARRAY[greatest(coalesce(array_length(rc_counter, 1), 0), 1)]);

  IF coalesce(array_length(k_key, 1), 0) > 0 THEN
    INSERT INTO usage (ceiling_id, scope_key, window_start, window_end)
    SELECT k.c, k.s, k.w, k.e FROM unnest(k_ceiling, k_scope, k_start, k_end) AS k(c, s, w, e)
    ORDER BY k.c, k.s, k.w
    ON CONFLICT DO NOTHING;

    FOR rec IN SELECT k.idx, u.held + u.settled AS used
               FROM usage u
               JOIN unnest(k_ceiling, k_scope, k_start) WITH ORDINALITY AS k(c, s, w, idx)
                 ON u.ceiling_id = k.c AND u.scope_key = k.s AND u.window_start = k.w
               ORDER BY u.ceiling_id, u.scope_key, u.window_start
               FOR UPDATE OF u LOOP
      k_used[rec.idx] := rec.used;
    END LOOP;
  END IF;

  -- Phase C: decide in arrival order against the live values; all-or-nothing per request.
  FOR i IN 1 .. n LOOP
    CONTINUE WHEN results[i] IS NOT NULL;
    IF q_idem[i] IS NOT NULL AND idem_seen ? (q_ep[i] || '|' || q_caller[i] || '|' || q_idem[i]) THEN
      j := (idem_seen ->> (q_ep[i] || '|' || q_caller[i] || '|' || q_idem[i]))::int;
      IF q_amount[j] = q_amount[i] AND q_dest_key[j] IS NOT DISTINCT FROM q_dest_key[i] THEN
        results[i] := results[j] || jsonb_build_object('replay', true);
      ELSE
        results[i] := jsonb_build_object('status', 'error', 'code', 'idempotency_conflict',
          'message', 'this idempotency key was used with other parameters', 'reservationId', results[j]->'reservationId');
      END IF;
      CONTINUE;
    END IF;

    v_fail := NULL;
    FOR x IN q_from[i] .. q_to[i] LOOP
      idx := rc_counter[x];
      IF k_used[idx] + k_delta[idx] + rc_charge[x] > rc_limit[x] THEN
        v_fail := x;
        EXIT;
      END IF;
    END LOOP;

    IF v_fail IS NOT NULL THEN
      c := cs[rc_ceiling[v_fail]];
      idx := rc_counter[v_fail];
      results[i] := jsonb_build_object(
        'status', 'refused',
        'gate', CASE WHEN c.scope = 'destination' THEN 'cooldown' ELSE 'ceiling' END,
        'ceilingId', c.id, 'limit', rc_limit[v_fail],
        'used', k_used[idx] + k_delta[idx],
        'remaining', greatest(rc_limit[v_fail] - k_used[idx] - k_delta[idx], 0),
        'retryAt', k_end[idx],
        'message', CASE WHEN rc_limit[v_fail] = 0 THEN 'this account is blocked on this endpoint'
                        WHEN c.scope = 'destination' THEN 'this destination is cooling down'
                        ELSE format('ceiling %s has %s of %s left', c.id,
                                    greatest(rc_limit[v_fail] - k_used[idx] - k_delta[idx], 0), rc_limit[v_fail]) END);
      CONTINUE;
    END IF;

    v_rem := '[]';
    FOR x IN q_from[i] .. q_to[i] LOOP
      idx := rc_counter[x];
      k_delta[idx] := k_delta[idx] + rc_charge[x];
      k_grants[idx] := k_grants[idx] + 1;
      rc_used[x] := k_used[idx] + k_delta[idx];
      IF NOT compact THEN
        v_rem := v_rem || (k_answer[idx] || jsonb_build_object('limit', rc_limit[x], 'used', rc_used[x],
          'remaining', rc_limit[x] - rc_used[x]));
      END IF;
    END LOOP;
    v_id := gen_random_uuid();
    g_q := g_q || i;
    g_id := g_id || v_id;
    g_charges := g_charges || q_charges[i];
    g_expires := g_expires || (t_now + make_interval(secs => q_ttl[i]));
    results[i] := jsonb_build_object('status', 'granted', 'replay', false, 'reservationId', v_id,
      'expiresAt', g_expires[array_length(g_expires, 1)])
      || CASE WHEN compact THEN jsonb_build_object('rc', jsonb_build_array(q_from[i], q_to[i]))
              ELSE jsonb_build_object('remaining', v_rem) END;
    IF q_idem[i] IS NOT NULL THEN
      idem_seen := idem_seen || jsonb_build_object(q_ep[i] || '|' || q_caller[i] || '|' || q_idem[i], i);
    END IF;
  END LOOP;

  -- Phase D: write the reservations. A key taken a moment ago by a concurrent batch conflicts on
  -- the unique index: that grant is undone here and answered from the stored reservation.
  IF coalesce(array_length(g_id, 1), 0) > 0 THEN
    WITH ins AS (
      INSERT INTO reservations (id, endpoint_id, caller, destination, destination_key, amount,
                                idempotency_key, charges, created_at, expires_at)
      SELECT g.id, q_ep[g.q], q_caller[g.q], q_dest[g.q], q_dest_key[g.q], q_amount[g.q],
             q_idem[g.q], g.ch, t_now, g.ex
      FROM unnest(g_q, g_id, g_charges, g_expires) AS g(q, id, ch, ex)
      ON CONFLICT (endpoint_id, caller, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING id
    )
    SELECT array_agg(id) INTO v_inserted FROM ins;

    FOR x IN 1 .. array_length(g_id, 1) LOOP
      CONTINUE WHEN g_id[x] = ANY (coalesce(v_inserted, '{}'));
      i := g_q[x];
      FOR q IN q_from[i] .. q_to[i] LOOP
        k_delta[rc_counter[q]] := k_delta[rc_counter[q]] - rc_charge[q];
        k_grants[rc_counter[q]] := k_grants[rc_counter[q]] - 1;
      END LOOP;
      SELECT * INTO v_existing FROM reservations
      WHERE endpoint_id = q_ep[i] AND caller = q_caller[i] AND idempotency_key = q_idem[i];
      IF v_existing.amount = q_amount[i] AND v_existing.destination_key IS NOT DISTINCT FROM q_dest_key[i] THEN
        results[i] := jsonb_build_object('status', 'granted', 'replay', true, 'reservationId', v_existing.id,
          'expiresAt', v_existing.expires_at, 'state', v_existing.state, 'remaining', '[]'::jsonb);
      ELSE
        results[i] := jsonb_build_object('status', 'error', 'code', 'idempotency_conflict',
          'message', 'this idempotency key was used with other parameters', 'reservationId', v_existing.id);
      END IF;
      -- Same-batch replays of the undone grant follow it.
      FOR q IN 1 .. n LOOP
        IF q <> i AND results[q]->>'reservationId' = g_id[x]::text THEN
          results[q] := results[i] || jsonb_build_object('replay', true);
        END IF;
      END LOOP;
    END LOOP;
  END IF;

  -- Phase E: one write per counter.
  UPDATE usage u
  SET held = u.held + d.delta, reservations = u.reservations + d.grants
  FROM unnest(k_ceiling, k_scope, k_start, k_delta, k_grants) AS d(c, s, w, delta, grants)
  WHERE u.ceiling_id = d.c AND u.scope_key = d.s AND u.window_start = d.w AND d.delta <> 0;

  -- Phase F: threshold alerts on global ceilings, fired once per ceiling, window and percent. The
  -- counter row is locked, so exactly one batch sees each crossing.
  FOR idx IN 1 .. coalesce(array_length(k_key, 1), 0) LOOP
    CONTINUE WHEN k_delta[idx] <= 0 OR k_scope[idx] <> '';
    FOR x IN 1 .. coalesce(array_length(cs, 1), 0) LOOP
      CONTINUE WHEN cs[x].id <> k_ceiling[idx] OR cs[x].value <= 0;
      c := cs[x];
      FOREACH v_pct IN ARRAY c.alert_thresholds::int[] LOOP
        IF k_used[idx] * 100 < v_pct::bigint * c.value AND (k_used[idx] + k_delta[idx]) * 100 >= v_pct::bigint * c.value THEN
          FOREACH e IN ARRAY eps LOOP
            IF e.id = c.endpoint_id THEN ep := e; EXIT; END IF;
          END LOOP;
          -- Worded like the dashboard: "email.subscribe reached 80% of its ceiling: 80 of 100 emails per UTC day".
          PERFORM ceilings.fire_alert('threshold',
            format('threshold:%s:%s:%s', c.id, extract(epoch FROM k_start[idx])::bigint, v_pct),
            c.endpoint_id, c.id, k_start[idx],
            format('%s reached %s%% of its ceiling: %s of %s %s per %s', ep.key, v_pct,
                   to_char(k_used[idx] + k_delta[idx], 'FM999,999,999,999,999,990'),
                   to_char(c.value, 'FM999,999,999,999,999,990'),
                   CASE c.metric WHEN 'calls' THEN 'calls' ELSE ep.unit END,
                   CASE c.window WHEN 'utc_day' THEN 'UTC day' ELSE 'billing month' END),
            jsonb_build_object('percent', v_pct, 'used', k_used[idx] + k_delta[idx], 'limit', c.value,
                               'windowEnd', k_end[idx]));
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;

  -- Phase G: log every refusal, folded.
  FOR i IN 1 .. n LOOP
    CONTINUE WHEN results[i]->>'status' <> 'refused';
    FOREACH e IN ARRAY eps LOOP
      IF e.id = q_ep[i] THEN v_key := e.key; EXIT; END IF;
    END LOOP;
    refused := refused || jsonb_build_object('endpointId', q_ep[i], 'endpointKey', v_key,
      'ceilingId', results[i]->'ceilingId', 'gate', results[i]->>'gate', 'caller', q_caller[i],
      'destination', coalesce(q_dest_key[i], ''), 'amount', q_amount[i], 'remaining', results[i]->'remaining',
      'requestId', q_request_id[i], 'detail', results[i]->>'message');
  END LOOP;
  IF jsonb_array_length(refused) > 0 THEN
    PERFORM ceilings.log_refusals(refused);
  END IF;

  IF compact THEN
    RETURN jsonb_build_object('answers', to_jsonb(results), 'rcCounter', to_jsonb(rc_counter),
      'rcLimit', to_jsonb(rc_limit), 'rcUsed', to_jsonb(rc_used), 'counters', to_jsonb(k_answer));
  END IF;
  RETURN to_jsonb(results);
END $$;
--> statement-breakpoint

-- One reservation, for SQL callers: the same batch function with a batch of one.
CREATE OR REPLACE FUNCTION ceilings.reserve(
  endpoint text, amount bigint, caller text DEFAULT NULL, destination text DEFAULT NULL,
  idempotency_key text DEFAULT NULL, ttl_seconds int DEFAULT 300, destination_key text DEFAULT NULL
) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ceilings.reserve_batch(jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
    'endpoint', endpoint, 'amount', amount, 'caller', caller, 'destination', destination,
    'destinationKey', destination_key, 'idempotencyKey', idempotency_key, 'ttlSeconds', ttl_seconds)))) -> 0
$$;
--> statement-breakpoint

-- Applies a resolution to every counter a reservation charged, in the fixed lock order.
-- kind: settle (held -> settled at the actual units; calls stay counted), release (give back),
-- expire (counts as fully spent).
CREATE OR REPLACE FUNCTION ceilings.resolve_charges(charges jsonb, kind text, actual bigint)
RETURNS void LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  ch jsonb;
BEGIN
  FOR ch IN SELECT value FROM jsonb_array_elements(charges)
            ORDER BY (value->>'c')::int, value->>'k', (value->>'w')::timestamptz LOOP
    UPDATE usage
    SET held = held - (ch->>'n')::bigint,
        settled = settled + CASE
          WHEN kind = 'release' THEN 0
          WHEN kind = 'settle' AND ch->>'m' = 'u' THEN actual
          ELSE (ch->>'n')::bigint END
    WHERE ceiling_id = (ch->>'c')::int AND scope_key = ch->>'k' AND window_start = (ch->>'w')::timestamptz;
  END LOOP;
END $$;
--> statement-breakpoint

-- Settles a held reservation to the actual units used, in the window it was made in. Actual above
-- the reservation is recorded (the money was spent) and flagged as an overrun.
-- p_caller, when given, must own the reservation (the HTTP API passes the key's account).
CREATE OR REPLACE FUNCTION ceilings.settle(reservation_id uuid, actual bigint, p_caller text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  res reservations;
  ep_key text;
BEGIN
  IF actual IS NULL OR actual < 0 OR actual > 9007199254740991 THEN
    RETURN jsonb_build_object('status', 'error', 'code', 'invalid_amount',
      'message', 'actual must be a whole number, zero or more');
  END IF;
  SELECT * INTO res FROM reservations WHERE id = reservation_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('status', 'not_found', 'message', 'no such reservation');
  END IF;
  IF p_caller IS NOT NULL AND res.caller <> p_caller THEN
    RETURN jsonb_build_object('status', 'forbidden', 'message', 'this reservation belongs to another account');
  END IF;
  IF res.state = 'settled' AND res.settled_amount = actual THEN
    RETURN jsonb_build_object('status', 'settled', 'replay', true, 'reservationId', res.id,
      'actual', actual, 'overrun', res.overrun);
  END IF;
  IF res.state <> 'held' THEN
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state,
      'message', format('reservation is already %s', res.state));
  END IF;
  PERFORM ceilings.resolve_charges(res.charges, 'settle', actual);
  UPDATE reservations SET state = 'settled', settled_amount = actual, overrun = actual > res.amount,
                          resolved_at = now()
  WHERE id = res.id;
  IF actual > res.amount THEN
    SELECT key INTO ep_key FROM endpoints WHERE id = res.endpoint_id;
    PERFORM ceilings.fire_alert('overrun', 'overrun:' || res.id, res.endpoint_id, NULL, NULL,
      format('%s: reservation settled at %s, above the %s reserved', ep_key, actual, res.amount),
      jsonb_build_object('reservationId', res.id, 'reserved', res.amount, 'actual', actual));
  END IF;
  RETURN jsonb_build_object('status', 'settled', 'replay', false, 'reservationId', res.id,
    'actual', actual, 'overrun', actual > res.amount);
END $$;
--> statement-breakpoint

-- Gives a held reservation back because the work did not happen. Guarded on that exact id; a
-- second release is harmless; a release after settle or expiry changes nothing.
CREATE OR REPLACE FUNCTION ceilings.release(reservation_id uuid, p_caller text DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  res reservations;
BEGIN
  SELECT * INTO res FROM reservations WHERE id = reservation_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('status', 'not_found', 'message', 'no such reservation');
  END IF;
  IF p_caller IS NOT NULL AND res.caller <> p_caller THEN
    RETURN jsonb_build_object('status', 'forbidden', 'message', 'this reservation belongs to another account');
  END IF;
  IF res.state = 'released' THEN
    RETURN jsonb_build_object('status', 'released', 'replay', true, 'reservationId', res.id);
  END IF;
  IF res.state <> 'held' THEN
    RETURN jsonb_build_object('status', 'already_resolved', 'state', res.state,
      'message', format('reservation is already %s', res.state));
  END IF;
  PERFORM ceilings.resolve_charges(res.charges, 'release', 0);
  UPDATE reservations SET state = 'released', resolved_at = now() WHERE id = res.id;
  RETURN jsonb_build_object('status', 'released', 'replay', false, 'reservationId', res.id);
END $$;
--> statement-breakpoint

-- The sweeper: held reservations past their TTL count as fully spent (the safe direction) and are
-- marked expired. SKIP LOCKED lets two sweepers, or a sweeper and a settle, run at once; the charges
-- of all swept reservations are applied together in the fixed counter order, so no deadlock.
CREATE OR REPLACE FUNCTION ceilings.expire_reservations(max_rows int DEFAULT 500)
RETURNS int LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  ids uuid[];
  all_charges jsonb;
  ep record;
BEGIN
  WITH due AS (
    SELECT r.id, r.charges FROM reservations r
    WHERE r.state = 'held' AND r.expires_at <= now()
    ORDER BY r.expires_at LIMIT max_rows
    FOR UPDATE SKIP LOCKED
  )
  SELECT array_agg(id), coalesce(jsonb_agg(c), '[]') INTO ids, all_charges
  FROM due LEFT JOIN LATERAL jsonb_array_elements(due.charges) c ON true;
  IF ids IS NULL THEN
    RETURN 0;
  END IF;
  SELECT array_agg(DISTINCT i) INTO ids FROM unnest(ids) i;
  PERFORM ceilings.resolve_charges(all_charges, 'expire', 0);
  UPDATE reservations SET state = 'expired', resolved_at = now() WHERE id = ANY (ids);
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
