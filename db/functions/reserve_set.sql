-- Decides a batch of reservation requests in arrival order, in one transaction: arrays in (one
-- element per request), rows out. The TypeScript library calls it directly; SQL callers may too,
-- or use reserve_batch (JSON in and out) and reserve (one request).
--
-- Guarantees:
--   * each request is decided alone and all-or-nothing against the live values: every ceiling
--     (global and per caller, units and calls) and the cooldown are checked and charged together,
--     and a refusal charges nothing (the throttle, which counts attempts, is the one exception);
--   * a request the database cannot take is an input error for itself, never a reason for the
--     batch to raise (only arrays of different lengths raise: that is the caller's bug, not input);
--   * `granted` is answered only for a reservation held when the batch commits: a new one, or a
--     held one named again by its idempotency key; a key whose reservation is settled, released or
--     expired is answered `resolved` with that state (replay_answer);
--   * callers are canonical (canonical_caller) for overrides, counters, reservations and refusals.
--
-- Lock order. Every batch, settle, release and sweep takes locks in this one order, each kind
-- sorted by its key, so two batches can never wait on each other in a cycle:
--   1. endpoint advisory locks, shared            by endpoint id
--   2. ceilings rows, FOR SHARE                   by ceiling id
--   3. ceiling_overrides rows, FOR SHARE          by (ceiling id, caller)
--   4. throttle_counters rows (upsert)            by (endpoint id, caller)
--   5. cooldown advisory locks                    by (ceiling id, hashtext(scope key), scope key)
--   6. reservations idempotency index entries     by (endpoint id, caller, key)
--   7. usage rows (insert if missing, FOR UPDATE) by (ceiling id, scope key, window start)
--   8. alerts (dedupe key, via fire_alert)        by counter order
--   9. refusals and refusal_hourly rows           by their keys (log_refusals)
-- Ceiling edits take 1 exclusively (lock_endpoints_for_change) then 2; settle, release and the
-- sweeper lock the reservation row, then 7 in the same order (resolve_charges).
--
-- Set-based: every step is one statement over the whole batch (arrays per request, per charge and
-- per counter), not a statement per request; no JSON is built while the counters are locked
-- except each grant's charges, which settle and release replay. When every counter can take the
-- whole batch, arrival order cannot change any decision and all are granted in one step; else
-- the requests are decided one by one in arrival order (the slow path).
--
-- Output: one row per request (`i` = its position, from 1), status granted | refused | resolved |
-- error; `code` is the error code or the refusal's gate. Then, for every grant made by this batch,
-- one row per ceiling it charged (status 'charge', same `i`): the ceiling, its limit, its used
-- after the grant, its window end (retry_at) and its metric, scope and window, for "remaining".
--
-- Plans: generic plans, made once per session (the arrays' lengths change call by call and the
-- custom plans' estimates with them). No plan changes what is locked or in which order: every
-- locking statement sorts by its key itself.
CREATE OR REPLACE FUNCTION ceilings.reserve_set(
  p_endpoint text[], p_amount bigint[], p_caller text[], p_destination text[], p_destination_key text[],
  p_idempotency_key text[], p_ttl int[], p_request_id text[]
) RETURNS TABLE (
  i int, status text, code text, reservation_id uuid, expires_at timestamptz, replay boolean, state text,
  ceiling_id int, lim bigint, used bigint, remaining bigint, retry_at timestamptz, message text,
  metric text, scope text, ceiling_window text
)
LANGUAGE plpgsql SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
  n int := coalesce(cardinality(p_endpoint), 0);
  t_now timestamptz := now();
  batch_endpoints endpoints[];
  batch_ceilings ceilings[];
  ceiling_window_start timestamptz[];
  ceiling_window_end timestamptz[];
  has_caller_ceiling boolean;
  -- per endpoint of the batch (as batch_endpoints): what its gates need, read once
  endpoint_kill int[];            -- its first ceiling switched off (value 0), if any
  endpoint_checks boolean[];      -- it has a per-caller ceiling or a cooldown: requests may lack what they need
  -- per request
  req_endpoint int[];
  req_caller text[];
  req_destination text[];
  req_destination_key text[];
  req_key text[];
  req_ttl int[];
  req_throttled boolean[];
  req_first_charge int[];
  req_last_charge int[];
  req_charges_of int[];           -- the request whose charges a grant reports (itself, or the first of its key)
  req_charges jsonb[];            -- what a grant charged, stored on its reservation for settle and release
  -- per request: the answer
  a_status text[];                -- NULL while the request is still to be decided
  a_code text[];
  a_message text[];
  a_ceiling int[];
  a_limit bigint[];
  a_used bigint[];
  a_remaining bigint[];
  a_retry timestamptz[];
  a_id uuid[];
  a_expires timestamptz[];
  a_replay boolean[];
  a_state text[];
  -- per charge: one request on one ceiling, by request then ceiling id
  charge_request int[];
  charge_counter int[];
  charge_amount bigint[];
  charge_used bigint[];           -- the counter's used after this charge (grants only)
  -- per counter: one (ceiling, scope key) in this batch's window
  counter_ceiling int[];
  counter_position int[];         -- position in batch_ceilings
  counter_scope text[];
  counter_limit bigint[];         -- the ceiling's value, or the caller's override
  counter_start timestamptz[];
  counter_end timestamptz[];
  counter_cooldown_seconds int[];
  counter_metric text[];
  counter_scope_name text[];
  counter_window_name text[];
  counter_used bigint[];          -- held + settled when locked
  counter_added bigint[];
  counter_grants bigint[];
  -- throttle, per (endpoint, caller)
  throttle_key text[];
  throttle_attempts bigint[];
  throttle_previous bigint[];
  throttle_failed boolean := false;
  -- grants to write
  grant_request int[];
  inserted uuid[];
  fits boolean;
  refused jsonb;
  ep endpoints;
  c ceilings;
  v_existing reservations;
  v_answer jsonb;
  v_window_start timestamptz;
  v_window_end timestamptz;
  x int; j int; idx int; v_failed int; v_pct int; r int;
  rec record;
BEGIN
  IF cardinality(p_amount) IS DISTINCT FROM n OR cardinality(p_caller) IS DISTINCT FROM n
     OR cardinality(p_destination) IS DISTINCT FROM n OR cardinality(p_destination_key) IS DISTINCT FROM n
     OR cardinality(p_idempotency_key) IS DISTINCT FROM n OR cardinality(p_ttl) IS DISTINCT FROM n
     OR cardinality(p_request_id) IS DISTINCT FROM n THEN
    RAISE EXCEPTION 'reserve_set: every array must have one element per request (% endpoints)', n USING ERRCODE = '22023';
  END IF;
  IF n = 0 THEN RETURN; END IF;
  a_status := array_fill(NULL::text, ARRAY[n]); a_code := a_status; a_message := a_status; a_state := a_status;
  a_ceiling := array_fill(NULL::int, ARRAY[n]); a_limit := array_fill(NULL::bigint, ARRAY[n]);
  a_used := a_limit; a_remaining := a_limit; a_retry := array_fill(NULL::timestamptz, ARRAY[n]);
  a_id := array_fill(NULL::uuid, ARRAY[n]); a_expires := a_retry; a_replay := array_fill(false, ARRAY[n]);
  req_charges_of := array_fill(NULL::int, ARRAY[n]);

  -- Step 1, input: canonical fields, then each request's own input error.
  SELECT array_agg(coalesce(ceilings.canonical_caller(t.c), '') ORDER BY t.o),
         array_agg(nullif(btrim(t.d), '') ORDER BY t.o),
         array_agg(coalesce(nullif(btrim(t.dk), ''), ceilings.canonical_destination(t.d)) ORDER BY t.o),
         array_agg(nullif(t.k, '') ORDER BY t.o),
         array_agg(coalesce(t.ttl, 300) ORDER BY t.o)
  INTO req_caller, req_destination, req_destination_key, req_key, req_ttl
  FROM unnest(p_caller, p_destination, p_destination_key, p_idempotency_key, p_ttl) WITH ORDINALITY AS t(c, d, dk, k, ttl, o);

  -- One pattern match over every text of the batch: only a batch with a control character
  -- anywhere looks at each field (the caller once trimmed: a trailing tab is whitespace).
  IF array_to_string(p_endpoint || req_caller || p_destination || p_destination_key || p_idempotency_key || p_request_id, '')
       ~ '[\u0001-\u001f\u007f-\u009f]' THEN
    SELECT array_agg(CASE
             WHEN ceilings.has_control_chars(t.e) THEN 'endpoint'
             WHEN ceilings.has_control_chars(t.c) THEN 'caller'
             WHEN ceilings.has_control_chars(t.d) THEN 'destination'
             WHEN ceilings.has_control_chars(t.dk) THEN 'destinationKey'
             WHEN ceilings.has_control_chars(t.k) THEN 'idempotencyKey'
             WHEN ceilings.has_control_chars(t.rq) THEN 'requestId' END ORDER BY t.o)
    INTO a_message
    FROM unnest(p_endpoint, req_caller, p_destination, p_destination_key, p_idempotency_key, p_request_id)
         WITH ORDINALITY AS t(e, c, d, dk, k, rq, o);
    SELECT array_agg(CASE WHEN m IS NOT NULL THEN 'error' END), array_agg(CASE WHEN m IS NOT NULL THEN 'invalid_input' END),
           array_agg(m || ' must not contain control characters')
    INTO a_status, a_code, a_message FROM unnest(a_message) AS m;
  END IF;
  SELECT array_agg(coalesce(t.st, v.st) ORDER BY t.o), array_agg(coalesce(t.cd, v.cd) ORDER BY t.o),
         array_agg(coalesce(t.msg, v.msg) ORDER BY t.o)
  INTO a_status, a_code, a_message
  FROM unnest(a_status, a_code, a_message, p_endpoint, p_amount, req_ttl, req_key, req_caller, p_destination,
              p_destination_key, p_request_id) WITH ORDINALITY AS t(st, cd, msg, e, a, ttl, k, c, d, dk, rq, o)
  CROSS JOIN LATERAL (SELECT
    CASE WHEN t.st IS NOT NULL THEN NULL
         WHEN t.a IS NULL OR t.a <= 0 OR t.a > 9007199254740991 THEN 'invalid_amount'
         WHEN t.ttl NOT BETWEEN 1 AND 86400 THEN 'invalid_ttl'
         WHEN length(t.k) > 200 THEN 'invalid_idempotency_key'
         WHEN length(t.c) > 200 OR length(t.d) > 320 OR length(t.dk) > 320 OR length(t.rq) > 100 THEN 'invalid_input' END AS cd) v0
  CROSS JOIN LATERAL (SELECT CASE WHEN v0.cd IS NOT NULL THEN 'error' END AS st, v0.cd,
    CASE WHEN v0.cd IS NULL THEN NULL
         WHEN v0.cd = 'invalid_amount' THEN format('amount must be a positive whole number, got %s', coalesce(t.a::text, 'null'))
         WHEN v0.cd = 'invalid_ttl' THEN 'ttlSeconds must be a whole number between 1 and 86400'
         WHEN v0.cd = 'invalid_idempotency_key' THEN 'idempotencyKey must be at most 200 characters'
         ELSE 'caller (200), destination (320) or requestId (100) is too long' END AS msg) v;

  -- Step 2, configuration: endpoints, their locks (1), ceilings (2) and the callers' overrides (3).
  SELECT coalesce(array_agg(s ORDER BY s.id), '{}') INTO batch_endpoints
  FROM endpoints s WHERE s.key = ANY (p_endpoint);
  FOREACH ep IN ARRAY batch_endpoints LOOP
    PERFORM pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(ep.id));
  END LOOP;
  -- Read the rows again under the locks: a catalog change (archive, per-call max) that committed
  -- while this batch waited for them binds this batch, not the next one.
  SELECT coalesce(array_agg(s ORDER BY s.id), '{}') INTO batch_endpoints
  FROM endpoints s WHERE s.id IN (SELECT u.id FROM unnest(batch_endpoints) u);

  -- The ceilings, locked in id order inside the subquery, each with its current window.
  SELECT coalesce(array_agg(l ORDER BY l.id), '{}'), array_agg(b.window_start ORDER BY l.id),
         array_agg(b.window_end ORDER BY l.id), coalesce(bool_or(l.scope = 'caller'), false)
  INTO batch_ceilings, ceiling_window_start, ceiling_window_end, has_caller_ceiling
  FROM (SELECT * FROM ceilings WHERE endpoint_id IN (SELECT u.id FROM unnest(batch_endpoints) u)
        ORDER BY id FOR SHARE) l
  JOIN unnest(batch_endpoints) s ON s.id = l.endpoint_id
  CROSS JOIN LATERAL ceilings.window_bounds(l.window, s.billing_day, l.window_seconds, t_now) b;

  SELECT array_agg(k.kill ORDER BY s.ordinality), array_agg(coalesce(k.checks, false) ORDER BY s.ordinality)
  INTO endpoint_kill, endpoint_checks
  FROM unnest(batch_endpoints) WITH ORDINALITY AS s
  LEFT JOIN LATERAL (SELECT min(cc.id) FILTER (WHERE cc.value = 0) AS kill, bool_or(cc.scope <> 'global') AS checks
                     FROM unnest(batch_ceilings) cc WHERE cc.endpoint_id = s.id) k ON true;

  -- Step 3, the cheap gates, in this order: unknown or archived endpoint; a caller or destination
  -- its ceilings need (the last failing ceiling in id order answers); an idempotent replay; the
  -- per-call max; the kill switch.
  SELECT array_agg(coalesce(e.id, 0) ORDER BY t.o),
         array_agg(coalesce(t.st, g.st) ORDER BY t.o), array_agg(coalesce(t.cd, g.cd) ORDER BY t.o),
         array_agg(coalesce(t.msg, g.msg) ORDER BY t.o), array_agg(g.ceiling ORDER BY t.o),
         array_agg(g.lim ORDER BY t.o), array_agg(g.rem ORDER BY t.o), array_agg(g.id ORDER BY t.o),
         array_agg(g.expires ORDER BY t.o), array_agg(coalesce(g.replay, false) ORDER BY t.o),
         array_agg(g.state ORDER BY t.o),
         array_agg(t.st IS NULL AND g.st IS NULL AND e.throttle_per_minute IS NOT NULL AND t.c <> '' ORDER BY t.o)
  INTO req_endpoint, a_status, a_code, a_message, a_ceiling, a_limit, a_remaining, a_id, a_expires, a_replay,
       a_state, req_throttled
  FROM unnest(p_endpoint, p_amount, req_caller, req_destination_key, req_key, a_status, a_code, a_message)
       WITH ORDINALITY AS t(key, a, c, dk, k, st, cd, msg, o)
  LEFT JOIN (SELECT s.*, s.ordinality AS p FROM unnest(batch_endpoints) WITH ORDINALITY AS s) e ON e.key = t.key
  -- Only an endpoint with a per-caller ceiling or a cooldown can need something a request lacks.
  CROSS JOIN LATERAL (SELECT CASE WHEN endpoint_checks[e.p] THEN (
    SELECT CASE WHEN cc.scope = 'caller' THEN 'caller_required' WHEN t.dk IS NULL THEN 'destination_required'
                ELSE 'invalid_destination' END || ':' || coalesce(cc.destination_kind::text, '')
    FROM unnest(batch_ceilings) cc
    WHERE cc.endpoint_id = e.id
      AND ((cc.scope = 'caller' AND t.c = '')
        OR (cc.scope = 'destination' AND t.dk IS NULL)
        -- A cooldown per inbox cannot be dodged with a phone number, nor one per phone with an
        -- address or a device id: a destination of another kind would open a window of its own.
        -- A phone is E.164 from the library, or digits as typed from SQL callers.
        OR (cc.scope = 'destination' AND cc.destination_kind IS NOT NULL
            AND NOT ((cc.destination_kind = 'email' AND position('@' IN t.dk) > 0)
                  OR (cc.destination_kind = 'phone' AND t.dk ~ '^\+?[0-9 ().-]{7,}$'))))
    ORDER BY cc.id DESC LIMIT 1) END AS found) need0
  CROSS JOIN LATERAL (SELECT split_part(need0.found, ':', 1) AS cd, split_part(need0.found, ':', 2) AS destination_kind) need
  LEFT JOIN reservations rv
    ON t.k IS NOT NULL AND rv.endpoint_id = e.id AND rv.caller = t.c AND rv.idempotency_key = t.k
  CROSS JOIN LATERAL (SELECT endpoint_kill[e.p] AS id) kill
  CROSS JOIN LATERAL (SELECT CASE WHEN rv.id IS NOT NULL THEN ceilings.replay_answer(rv, t.a, t.dk) END AS j) rp
  CROSS JOIN LATERAL (SELECT
    CASE WHEN t.st IS NOT NULL THEN NULL
         WHEN e.id IS NULL OR e.archived_at IS NOT NULL OR need.cd IS NOT NULL THEN 'error'
         WHEN rp.j IS NOT NULL THEN rp.j->>'status'
         WHEN t.a > e.per_call_max OR kill.id IS NOT NULL THEN 'refused' END AS st,
    CASE WHEN t.st IS NOT NULL THEN NULL
         WHEN e.id IS NULL THEN 'unknown_endpoint'
         WHEN e.archived_at IS NOT NULL THEN 'endpoint_archived'
         WHEN need.cd IS NOT NULL THEN need.cd
         WHEN rp.j IS NOT NULL THEN rp.j->>'code'
         WHEN t.a > e.per_call_max THEN 'per_call_max'
         WHEN kill.id IS NOT NULL THEN 'kill_switch' END AS cd,
    CASE WHEN t.st IS NOT NULL THEN NULL
         WHEN e.id IS NULL THEN format('unknown endpoint %L', t.key)
         WHEN e.archived_at IS NOT NULL THEN format('endpoint %s is archived: every reservation is refused and nothing is charged', e.key)
         WHEN need.cd = 'caller_required' THEN format('endpoint %s has a per-caller ceiling: caller is required', e.key)
         WHEN need.cd = 'destination_required' THEN format('endpoint %s has a cooldown: destination is required', e.key)
         WHEN need.cd IS NOT NULL THEN format('endpoint %s has a cooldown per %s: the destination must be one', e.key,
           CASE need.destination_kind WHEN 'email' THEN 'email address' ELSE 'phone number' END)
         WHEN rp.j IS NOT NULL THEN rp.j->>'message'
         WHEN t.a > e.per_call_max THEN format('amount %s is above the per-call max of %s', t.a, e.per_call_max)
         WHEN kill.id IS NOT NULL THEN format('endpoint %s is switched off', e.key) END AS msg,
    CASE WHEN t.st IS NULL AND e.archived_at IS NULL AND need.cd IS NULL AND rp.j IS NULL
              AND t.a <= e.per_call_max AND kill.id IS NOT NULL THEN kill.id END AS ceiling,
    CASE WHEN t.st IS NOT NULL OR e.archived_at IS NOT NULL OR need.cd IS NOT NULL OR rp.j IS NOT NULL THEN NULL
         WHEN t.a > e.per_call_max THEN e.per_call_max WHEN kill.id IS NOT NULL THEN 0 END AS lim,
    CASE WHEN t.st IS NULL AND e.archived_at IS NULL AND need.cd IS NULL AND rp.j IS NULL
              AND t.a <= e.per_call_max AND kill.id IS NOT NULL THEN 0::bigint END AS rem,
    (rp.j->>'reservationId')::uuid AS id, (rp.j->>'expiresAt')::timestamptz AS expires,
    (rp.j->>'replay')::boolean AS replay, rp.j->>'state' AS state
  ) g;

  -- Step 4, throttle (4): soft and approximate (this minute plus the previous one, weighted by
  -- overlap); it counts every attempt that reaches it, refused or not. One upsert for the whole
  -- batch, in (endpoint, caller) order: locking them in request order deadlocked two batches
  -- holding the same callers in opposite orders.
  IF true = ANY (req_throttled) THEN
    BEGIN
      WITH wanted AS (
        SELECT t.ep, t.caller, count(*) AS attempts
        FROM unnest(req_endpoint, req_caller, req_throttled) AS t(ep, caller, throttled)
        WHERE t.throttled
        GROUP BY t.ep, t.caller
      ), counted AS (
        INSERT INTO throttle_counters AS tc (endpoint_id, caller, minute, attempts)
        SELECT w.ep, w.caller, date_trunc('minute', t_now), w.attempts FROM wanted w
        ORDER BY w.ep, w.caller
        ON CONFLICT (endpoint_id, caller, minute) DO UPDATE SET attempts = tc.attempts + excluded.attempts
        RETURNING tc.endpoint_id, tc.caller, tc.attempts
      )
      SELECT array_agg(k.endpoint_id || '|' || k.caller), array_agg(k.attempts - w.attempts),
             array_agg(coalesce(p.attempts, 0))
      INTO throttle_key, throttle_attempts, throttle_previous
      FROM counted k
      JOIN wanted w ON w.ep = k.endpoint_id AND w.caller = k.caller
      LEFT JOIN throttle_counters p
        ON p.endpoint_id = k.endpoint_id AND p.caller = k.caller AND p.minute = date_trunc('minute', t_now) - interval '1 minute';
    EXCEPTION WHEN lock_not_available THEN
      throttle_failed := true;
    END;
    FOR r IN 1 .. n LOOP
      CONTINUE WHEN NOT req_throttled[r];
      SELECT * INTO ep FROM unnest(batch_endpoints) s WHERE s.id = req_endpoint[r];
      IF throttle_failed THEN
        IF NOT ep.throttle_fail_open THEN
          a_status[r] := 'refused'; a_code[r] := 'unavailable'; a_message[r] := 'throttle unavailable';
        END IF;
        CONTINUE;
      END IF;
      idx := array_position(throttle_key, req_endpoint[r] || '|' || req_caller[r]);
      throttle_attempts[idx] := throttle_attempts[idx] + 1;
      IF throttle_attempts[idx] + throttle_previous[idx] * (60 - extract(second FROM t_now)) / 60 > ep.throttle_per_minute THEN
        a_status[r] := 'refused'; a_code[r] := 'throttle'; a_limit[r] := ep.throttle_per_minute;
        a_message[r] := format('more than %s requests a minute from this caller', ep.throttle_per_minute);
      END IF;
    END LOOP;
  END IF;

  -- A key named twice in this batch is one request: the later ones get the first one's answer.
  SELECT array_agg(CASE WHEN d.first_of <> d.o THEN 'copy' ELSE d.st END ORDER BY d.o),
         array_agg(CASE WHEN d.first_of <> d.o THEN d.first_of END ORDER BY d.o)
  INTO a_status, req_charges_of
  FROM (SELECT t.o, t.st, CASE WHEN t.st IS NULL AND t.k IS NOT NULL
                               THEN min(t.o) OVER (PARTITION BY t.st IS NULL, t.ep, t.c, t.k) END::int AS first_of
        FROM unnest(a_status, req_endpoint, req_caller, req_key) WITH ORDINALITY AS t(st, ep, c, k, o)) d;


  -- Step 5, the counters each request would charge: one per ceiling of its endpoint, in ceiling
  -- id order; a counter is one (ceiling, scope key), its limit the ceiling's value or the
  -- caller's override (read FOR SHARE, in key order, only when a per-caller ceiling exists).
  WITH o AS (
    SELECT ov.ceiling_id, ov.caller, ov.value FROM ceiling_overrides ov
    WHERE has_caller_ceiling
      AND ov.ceiling_id IN (SELECT u.id FROM unnest(batch_ceilings) u WHERE u.scope = 'caller')
      AND ov.caller = ANY (req_caller)
    ORDER BY ov.ceiling_id, ov.caller FOR SHARE
  ), ch AS (
    SELECT t.o AS request, cc.ordinality::int AS position, cc.id AS ceiling,
           CASE cc.scope WHEN 'global' THEN '' WHEN 'caller' THEN t.c ELSE t.dk END AS scope_key,
           CASE cc.metric WHEN 'calls' THEN 1::bigint ELSE t.a END AS amount,
           coalesce(o.value, cc.value) AS lim, cc.window_seconds,
           cc.metric::text AS metric, cc.scope::text AS scope, cc.window::text AS ceiling_window,
           row_number() OVER (ORDER BY t.o, cc.id)::int AS x
    FROM unnest(req_endpoint, p_amount, req_caller, req_destination_key, a_status) WITH ORDINALITY AS t(ep, a, c, dk, st, o)
    JOIN unnest(batch_ceilings) WITH ORDINALITY AS cc ON cc.endpoint_id = t.ep
    LEFT JOIN o ON cc.scope = 'caller' AND o.ceiling_id = cc.id AND o.caller = t.c
    WHERE t.st IS NULL
  ), numbered AS (
    SELECT ch.*, dense_rank() OVER (ORDER BY ch.ceiling, ch.scope_key)::int AS counter FROM ch
  ), counters AS (
    SELECT DISTINCT ON (nb.counter) nb.counter, nb.ceiling, nb.position, nb.scope_key, nb.lim, nb.window_seconds,
           nb.metric, nb.scope, nb.ceiling_window
    FROM numbered nb ORDER BY nb.counter
  )
  SELECT (SELECT array_agg(nb.request ORDER BY nb.x) FROM numbered nb),
         (SELECT array_agg(nb.counter ORDER BY nb.x) FROM numbered nb),
         (SELECT array_agg(nb.amount ORDER BY nb.x) FROM numbered nb),
         (SELECT array_agg(k.ceiling ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(k.position ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(k.scope_key ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(k.lim ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(k.window_seconds ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(CASE WHEN k.window_seconds IS NULL THEN ceiling_window_start[k.position] END ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(CASE WHEN k.window_seconds IS NULL THEN ceiling_window_end[k.position] END ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(k.metric ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(k.scope ORDER BY k.counter) FROM counters k),
         (SELECT array_agg(k.ceiling_window ORDER BY k.counter) FROM counters k)
  INTO charge_request, charge_counter, charge_amount, counter_ceiling, counter_position, counter_scope,
       counter_limit, counter_cooldown_seconds, counter_start, counter_end, counter_metric, counter_scope_name,
       counter_window_name;
  charge_request := coalesce(charge_request, '{}');
  SELECT array_agg(g.f ORDER BY s.o), array_agg(g.l ORDER BY s.o)
  INTO req_first_charge, req_last_charge
  FROM generate_series(1, n) AS s(o)
  LEFT JOIN (SELECT q.r, min(q.x)::int AS f, max(q.x)::int AS l
             FROM unnest(charge_request) WITH ORDINALITY AS q(r, x) GROUP BY q.r) g ON g.r = s.o;

  -- Step 6, cooldown windows (5): a cooldown starts at its first hit, so two first hits on one
  -- destination are serialised by an advisory lock and cannot both open a window.
  FOR rec IN SELECT k.idx FROM unnest(counter_ceiling, counter_scope, counter_cooldown_seconds) WITH ORDINALITY AS k(c, s, secs, idx)
             WHERE k.secs IS NOT NULL ORDER BY k.c, hashtext(k.s), k.s LOOP
    idx := rec.idx;
    PERFORM pg_advisory_xact_lock(counter_ceiling[idx], hashtext(counter_scope[idx]));
    SELECT u.window_start, u.window_end INTO v_window_start, v_window_end FROM usage u
    WHERE u.ceiling_id = counter_ceiling[idx] AND u.scope_key = counter_scope[idx] AND u.window_end > t_now
    ORDER BY u.window_start DESC LIMIT 1;
    IF FOUND THEN
      counter_start[idx] := v_window_start;
      counter_end[idx] := v_window_end;
    ELSE
      counter_start[idx] := t_now;
      counter_end[idx] := t_now + make_interval(secs => counter_cooldown_seconds[idx]);
    END IF;
  END LOOP;

  -- Step 7, write a reservation for every request still to be decided (6), before the counters
  -- are locked: this is most of a batch's writing, and the counters are what every batch waits
  -- for. The rows of requests then refused are deleted in this transaction, never seen. Each
  -- row carries its charges, which settle, release and expiry replay. Ids are time-ordered
  -- (UUID version 7: milliseconds, then 74 random bits), so new rows land at the right edge of
  -- the primary key instead of on a random page of it.
  SELECT array_agg(CASE WHEN t.st IS NULL THEN encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
             placing substring(int8send((extract(epoch FROM t_now) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
           ELSE t.id END ORDER BY t.o),
         array_agg(CASE WHEN t.st IS NULL THEN t_now + make_interval(secs => req_ttl[t.o]) ELSE t.ex END ORDER BY t.o),
         array_agg(t.o) FILTER (WHERE t.st IS NULL)
  INTO a_id, a_expires, grant_request
  FROM unnest(a_status, a_id, a_expires) WITH ORDINALITY AS t(st, id, ex, o);
  grant_request := coalesce(grant_request, '{}');
  IF cardinality(grant_request) > 0 THEN
    SELECT array_agg(j.charges ORDER BY s.o) INTO req_charges
    FROM generate_series(1, n) AS s(o)
    LEFT JOIN (SELECT q.r, jsonb_agg(jsonb_build_object('c', counter_ceiling[q.k], 'k', counter_scope[q.k], 'w', counter_start[q.k],
                                      'm', CASE counter_metric[q.k] WHEN 'calls' THEN 'c' ELSE 'u' END, 'n', q.a) ORDER BY q.x) AS charges
               FROM unnest(charge_request, charge_counter, charge_amount) WITH ORDINALITY AS q(r, k, a, x)
               WHERE a_status[q.r] IS NULL GROUP BY q.r) j ON j.r = s.o;
    WITH ins AS (
      INSERT INTO reservations (id, endpoint_id, caller, destination, destination_key, amount,
                                idempotency_key, charges, created_at, expires_at)
      SELECT a_id[g.q], req_endpoint[g.q], req_caller[g.q], req_destination[g.q], req_destination_key[g.q], p_amount[g.q],
             req_key[g.q],
             coalesce(req_charges[g.q], '[]'::jsonb),
             t_now, a_expires[g.q]
      FROM unnest(grant_request) AS g(q)
      ORDER BY req_endpoint[g.q], req_caller[g.q], req_key[g.q]
      ON CONFLICT (endpoint_id, caller, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING id
    )
    SELECT array_agg(id) INTO inserted FROM ins;
    -- A key taken a moment ago by a concurrent batch: answered from the stored reservation.
    IF coalesce(cardinality(inserted), 0) < cardinality(grant_request) THEN
      FOREACH r IN ARRAY grant_request LOOP
        CONTINUE WHEN a_id[r] = ANY (coalesce(inserted, '{}'));
        SELECT * INTO v_existing FROM reservations
        WHERE endpoint_id = req_endpoint[r] AND caller = req_caller[r] AND idempotency_key = req_key[r];
        v_answer := ceilings.replay_answer(v_existing, p_amount[r], req_destination_key[r]);
        a_status[r] := v_answer->>'status'; a_code[r] := v_answer->>'code'; a_message[r] := v_answer->>'message';
        a_id[r] := (v_answer->>'reservationId')::uuid; a_expires[r] := (v_answer->>'expiresAt')::timestamptz;
        a_replay[r] := coalesce((v_answer->>'replay')::boolean, false); a_state[r] := v_answer->>'state';
      END LOOP;
      grant_request := array(SELECT g FROM unnest(grant_request) g WHERE a_status[g] IS NULL);
    END IF;
  END IF;

  -- Step 8, lock the counters (7), creating missing rows first, all in key order.
  IF cardinality(counter_ceiling) > 0 THEN
    INSERT INTO usage (ceiling_id, scope_key, window_start, window_end)
    SELECT k.c, k.s, k.w, k.e FROM unnest(counter_ceiling, counter_scope, counter_start, counter_end) AS k(c, s, w, e)
    ORDER BY k.c, k.s, k.w
    ON CONFLICT DO NOTHING;
    SELECT array_agg(l.used ORDER BY l.idx) INTO counter_used
    FROM (SELECT k.idx, u.held + u.settled AS used
          FROM usage u
          JOIN unnest(counter_ceiling, counter_scope, counter_start) WITH ORDINALITY AS k(c, s, w, idx)
            ON u.ceiling_id = k.c AND u.scope_key = k.s AND u.window_start = k.w
          ORDER BY u.ceiling_id, u.scope_key, u.window_start
          FOR UPDATE OF u) l;
  END IF;

  -- Step 9, decide. When every counter can take every request still to be decided, arrival
  -- order cannot change a decision: all are granted at once. Else one by one, in arrival order,
  -- each all-or-nothing against the counters as the requests before it left them.
  SELECT coalesce(bool_and(counter_used[d.k] + d.demand <= counter_limit[d.k]), true) INTO fits
  FROM (SELECT q.k, sum(q.a) AS demand FROM unnest(charge_counter, charge_amount, charge_request) AS q(k, a, r)
        WHERE a_status[q.r] IS NULL GROUP BY q.k) d;
  IF fits THEN
    SELECT array_agg(CASE WHEN a_status[q.r] IS NULL THEN counter_used[q.k] + q.running END ORDER BY q.x)
    INTO charge_used
    FROM (SELECT z.k, z.r, z.x, sum(CASE WHEN a_status[z.r] IS NULL THEN z.a ELSE 0 END) OVER (PARTITION BY z.k ORDER BY z.x) AS running
          FROM unnest(charge_counter, charge_amount, charge_request) WITH ORDINALITY AS z(k, a, r, x)) q;
    SELECT array_agg(coalesce(d.demand, 0) ORDER BY s.k), array_agg(coalesce(d.grants, 0) ORDER BY s.k)
    INTO counter_added, counter_grants
    FROM generate_series(1, coalesce(cardinality(counter_ceiling), 0)) AS s(k)
    LEFT JOIN (SELECT q.k, sum(q.a) AS demand, count(*) AS grants FROM unnest(charge_counter, charge_amount, charge_request) AS q(k, a, r)
               WHERE a_status[q.r] IS NULL GROUP BY q.k) d ON d.k = s.k;
    FOREACH r IN ARRAY grant_request LOOP a_status[r] := 'granted'; END LOOP;
  ELSE
    counter_added := array_fill(0::bigint, ARRAY[cardinality(counter_ceiling)]);
    counter_grants := counter_added;
    charge_used := array_fill(NULL::bigint, ARRAY[greatest(cardinality(charge_counter), 1)]);
    FOREACH r IN ARRAY grant_request LOOP
      v_failed := NULL;
      FOR x IN coalesce(req_first_charge[r], 1) .. coalesce(req_last_charge[r], 0) LOOP
        idx := charge_counter[x];
        IF counter_used[idx] + counter_added[idx] + charge_amount[x] > counter_limit[idx] THEN
          v_failed := x;
          EXIT;
        END IF;
      END LOOP;
      IF v_failed IS NULL THEN
        FOR x IN coalesce(req_first_charge[r], 1) .. coalesce(req_last_charge[r], 0) LOOP
          idx := charge_counter[x];
          counter_added[idx] := counter_added[idx] + charge_amount[x];
          counter_grants[idx] := counter_grants[idx] + 1;
          charge_used[x] := counter_used[idx] + counter_added[idx];
        END LOOP;
        a_status[r] := 'granted';
        CONTINUE;
      END IF;
      idx := charge_counter[v_failed];
      c := batch_ceilings[counter_position[idx]];
      a_status[r] := 'refused';
      a_code[r] := CASE WHEN c.scope = 'destination' THEN 'cooldown' ELSE 'ceiling' END;
      a_ceiling[r] := c.id;
      a_limit[r] := counter_limit[idx];
      a_used[r] := counter_used[idx] + counter_added[idx];
      a_remaining[r] := greatest(counter_limit[idx] - a_used[r], 0);
      a_retry[r] := counter_end[idx];
      a_message[r] := CASE WHEN counter_limit[idx] = 0 THEN 'this account is blocked on this endpoint'
                           WHEN c.scope = 'destination' THEN 'this destination is cooling down'
                           ELSE format('ceiling %s has %s of %s left', c.id, a_remaining[r], counter_limit[idx]) END;
    END LOOP;
    -- The reservations written for refused requests are taken back before anyone can see them.
    DELETE FROM reservations rs
    WHERE rs.id IN (SELECT a_id[g] FROM unnest(grant_request) g WHERE a_status[g] = 'refused');
    FOREACH r IN ARRAY grant_request LOOP
      IF a_status[r] = 'refused' THEN a_id[r] := NULL; a_expires[r] := NULL; END IF;
    END LOOP;
  END IF;

  -- Copies of a key named earlier in the batch: its answer again, or a conflict if they differ.
  FOR r IN SELECT t.o FROM unnest(a_status) WITH ORDINALITY AS t(st, o) WHERE t.st = 'copy' LOOP
    j := req_charges_of[r];
    IF p_amount[j] = p_amount[r] AND req_destination_key[j] IS NOT DISTINCT FROM req_destination_key[r] THEN
      a_status[r] := a_status[j]; a_code[r] := a_code[j]; a_message[r] := a_message[j]; a_ceiling[r] := a_ceiling[j];
      a_limit[r] := a_limit[j]; a_used[r] := a_used[j]; a_remaining[r] := a_remaining[j]; a_retry[r] := a_retry[j];
      a_id[r] := a_id[j]; a_expires[r] := a_expires[j]; a_state[r] := a_state[j];
      a_replay[r] := a_status[j] IN ('granted', 'resolved');
      IF a_replay[j] AND a_status[j] = 'granted' THEN req_charges_of[r] := NULL; END IF;  -- a stored hold: no counters read
    ELSE
      a_status[r] := 'error'; a_code[r] := 'idempotency_conflict';
      a_message[r] := 'this idempotency key was used with other parameters';
      a_id[r] := CASE WHEN a_status[j] IN ('granted', 'resolved') THEN a_id[j] END;
    END IF;
  END LOOP;

  -- Step 10, one write per counter (already locked).
  UPDATE usage u
  SET held = u.held + d.added, reservations = u.reservations + d.grants
  FROM unnest(counter_ceiling, counter_scope, counter_start, counter_added, counter_grants) AS d(c, s, w, added, grants)
  WHERE u.ceiling_id = d.c AND u.scope_key = d.s AND u.window_start = d.w AND d.added <> 0;

  -- Step 11, threshold alerts (8) on global ceilings, once per ceiling, window and percent. The
  -- counter row is locked, so exactly one batch sees each crossing.
  FOR rec IN SELECT k.idx, k.used, k.added FROM unnest(counter_position, counter_scope, counter_used, counter_added)
               WITH ORDINALITY AS k(p, s, used, added, idx)
             WHERE k.added > 0 AND k.s = '' AND batch_ceilings[k.p].value > 0 ORDER BY k.idx LOOP
    idx := rec.idx;
    c := batch_ceilings[counter_position[idx]];
    FOREACH v_pct IN ARRAY c.alert_thresholds::int[] LOOP
      IF rec.used * 100 < v_pct::bigint * c.value AND (rec.used + rec.added) * 100 >= v_pct::bigint * c.value THEN
        SELECT * INTO ep FROM unnest(batch_endpoints) s WHERE s.id = c.endpoint_id;
        -- Worded like the dashboard: "email.subscribe reached 80% of its ceiling: 80 of 100 emails per UTC day".
        PERFORM ceilings.fire_alert('threshold',
          format('threshold:%s:%s:%s', c.id, extract(epoch FROM counter_start[idx])::bigint, v_pct),
          c.endpoint_id, c.id, counter_start[idx],
          format('%s reached %s%% of its ceiling: %s of %s %s per %s', ep.key, v_pct,
                 to_char(rec.used + rec.added, 'FM999,999,999,999,999,990'),
                 to_char(c.value, 'FM999,999,999,999,999,990'),
                 CASE c.metric WHEN 'calls' THEN 'calls' ELSE ep.unit END,
                 CASE c.window WHEN 'utc_day' THEN 'UTC day' ELSE 'billing month' END),
          jsonb_build_object('percent', v_pct, 'used', rec.used + rec.added, 'limit', c.value,
                             'windowEnd', counter_end[idx]));
      END IF;
    END LOOP;
  END LOOP;

  -- Step 12, log every refusal (9), folded; a copy of a refused request is not logged twice.
  IF 'refused' = ANY (a_status) THEN
    SELECT jsonb_agg(jsonb_build_object('endpointId', req_endpoint[t.o], 'endpointKey', p_endpoint[t.o],
             'ceilingId', a_ceiling[t.o], 'gate', a_code[t.o], 'caller', req_caller[t.o],
             'destination', coalesce(req_destination_key[t.o], ''), 'amount', p_amount[t.o], 'remaining', a_remaining[t.o],
             'requestId', p_request_id[t.o], 'detail', a_message[t.o]) ORDER BY t.o)
    INTO refused
    FROM unnest(a_status, req_charges_of) WITH ORDINALITY AS t(st, src, o)
    WHERE t.st = 'refused' AND t.src IS NULL;
    PERFORM ceilings.log_refusals(refused);
  END IF;

  RETURN QUERY
    SELECT q.i, q.status, q.code, q.reservation_id, q.expires_at, q.replay, q.state, q.ceiling_id, q.lim, q.used,
           q.remaining, q.retry_at, q.message, q.metric, q.scope, q.ceiling_window
    FROM (
      SELECT t.o::int AS i, t.st AS status, t.cd AS code, t.id AS reservation_id, t.ex AS expires_at, t.rp AS replay,
             t.sta AS state, t.ce AS ceiling_id, t.li AS lim, t.us AS used, t.re AS remaining, t.rt AS retry_at,
             t.msg AS message, NULL::text AS metric, NULL::text AS scope, NULL::text AS ceiling_window, 0 AS x
      FROM unnest(a_status, a_code, a_id, a_expires, a_replay, a_state, a_ceiling, a_limit, a_used, a_remaining, a_retry, a_message)
           WITH ORDINALITY AS t(st, cd, id, ex, rp, sta, ce, li, us, re, rt, msg, o)
      UNION ALL
      SELECT t.o::int, 'charge', NULL, NULL, NULL, NULL, NULL, counter_ceiling[k.k], counter_limit[k.k], charge_used[k.x],
             counter_limit[k.k] - charge_used[k.x], counter_end[k.k], NULL,
             counter_metric[k.k], counter_scope_name[k.k], counter_window_name[k.k], k.x
      FROM unnest(a_status, a_replay, req_charges_of) WITH ORDINALITY AS t(st, rp, src, o)
      CROSS JOIN LATERAL generate_series(req_first_charge[coalesce(t.src, t.o)], req_last_charge[coalesce(t.src, t.o)]) AS s(x)
      CROSS JOIN LATERAL (SELECT s.x, charge_counter[s.x] AS k) k
      WHERE t.st = 'granted' AND (NOT t.rp OR t.src IS NOT NULL)
    ) q
    ORDER BY q.status = 'charge', q.i, q.x;
END $$;
