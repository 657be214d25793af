-- The typed entry: decide_batch's guarantees, locks, input and answers, for every batch (see its
-- header; this is the function the library, the JSON entry and SQL callers call).
--
-- The common batch is decided here, whole, in a dozen statements: the library's compact call with
-- the ids sent (reservation_ids), one endpoint, no idempotency key, destination or parts, every
-- request clean (input_error would answer NULL for each), on an endpoint that is live, priced by
-- one part, without throttle, cooldown or a limit at 0, whose callers are all known accounts, none
-- blocked, each request within the per-call max, and every counter with room for the whole batch.
-- Then no gate can refuse a request, arrival order cannot change a decision, and every request is
-- granted: the answer is decide_batch's for a batch that fits whole (contract version 9: every
-- grant's answer null, its charges in the lists). decide_batch spends most of a batch's work on
-- what such a batch never needs (per-request gates, keys, refusals, a hundred variables set up on
-- every call): this path takes a quarter fewer instructions a batch of 32 on one ceiling, a third
-- fewer a lone call (measured 2026-12-07, in docs/enforcement.md).
--
-- Any other batch is decide_batch's, called with the same arguments. Where a check needs the
-- database it is made before anything is written, so a batch handed over has changed nothing but
-- counters' rows made empty, which decide_batch would make too, and the endpoint's configuration
-- kept (endpoint_config), which decide_batch does not read. Two checks need the counters
-- locked: a batch that no longer fits (another batch took the room since this one read them) or
-- that crosses a global limit's alert threshold (decide_batch fires the alert) has its rows
-- deleted (and a counter it wrote set back) and is decided by decide_batch in the same
-- transaction, which then takes no lock that could wait: the endpoint's, the overrides' and the
-- counters' are held already, every account exists, and a batch without keys conflicts with no
-- reservation.
--
-- Lock order: decide_batch's, the part a batch of one endpoint without keys, throttle or cooldown
-- takes: the endpoint's advisory lock (1), its kept configuration's row when a batch writes it
-- (1b, endpoint_config), the overrides FOR SHARE (3), missing counters made (6),
-- the reservations written (7), the counters (7b: one by its guarded update, many FOR UPDATE in
-- one statement and then written), each sorted by its key.
CREATE OR REPLACE FUNCTION ceilings.reserve_batch_arrays(
  endpoint_keys text[], amounts bigint[], callers text[] DEFAULT NULL, destinations text[] DEFAULT NULL,
  destination_keys text[] DEFAULT NULL, idempotency_keys text[] DEFAULT NULL, ttl_seconds int[] DEFAULT NULL,
  request_ids text[] DEFAULT NULL, units_by_part jsonb[] DEFAULT NULL, compact boolean DEFAULT false, input_errors jsonb[] DEFAULT NULL,
  reservation_ids uuid[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  n int := cardinality(endpoint_keys);
  t_now timestamptz := now();
  dims text;
  endpoint_id int;
  per_call_max bigint;
  -- The endpoint's limits by position (its ceilings by id, then its budgets by id), as decide_batch
  -- numbers them, and each one's part of a grant's answer.
  limit_count int;
  limit_ids int[];
  limit_scope text[];     -- g(lobal) or a(ccount)
  limit_measure text[];   -- u(nits), c(alls) or m(icros)
  limit_value bigint[];
  limit_start timestamptz[];
  limit_end timestamptz[];
  limit_thresholds jsonb;  -- per limit, its alert thresholds (a global limit's; [] for a per-account one)
  entries jsonb;
  prices jsonb;           -- {part: picos a unit}, what each reservation keeps
  unit_price numeric;     -- the one part's
  handed_over boolean;
  -- per request
  req_caller text[];
  req_money bigint[];
  req_expires timestamptz[];
  -- the batch's callers (canonical, distinct), their plans, and the per-account values
  batch_callers text[];
  caller_plan int[];
  account_values jsonb;
  -- per counter, numbered by limit: a global limit's one, a per-account limit's one per caller
  counter_base int[];
  counter_position int[];
  counter_limit_id int[];
  counter_scope text[];
  counter_start timestamptz[];
  counter_end timestamptz[];
  counter_measure text[];
  counter_limit bigint[];
  counter_demand bigint[];
  counter_charges bigint[];
  counter_used bigint[];
  counter_tid tid[];
  missing int[];          -- counters without a row yet
  -- per charge (request i's are (i - 1) * limit_count + 1 .. i * limit_count)
  charge_counter int[];
  charge_amount bigint[];
  batch_charges reservation_charge[];
  first_charges text;     -- the compact answer's lists, made with the charges
  last_charges text;
  charge_limits text;
  v_units numeric;
  v_money numeric;
  fits boolean;
  alerting boolean;
  locked int;
  v_written bigint;
  v_used bigint;
  v_seqscan text;
  x int;
  y int;
BEGIN
  -- Phase 1, the batch's own shape: every list decide_batch reads here, as it reads it (list_shape:
  -- NULL, or '[1:n]'; an empty list is not NULL); a NULL in the ids, or a list of another shape, is
  -- decide_batch's to refuse.
  dims := '[1:' || n || ']';
  IF NOT coalesce(compact AND n > 0 AND reservation_ids IS NOT NULL AND input_errors IS NULL AND units_by_part IS NULL
                  AND destinations IS NULL AND destination_keys IS NULL AND idempotency_keys IS NULL
                  AND array_dims(endpoint_keys) = dims AND array_dims(amounts) = dims AND (callers IS NULL OR array_dims(callers) = dims)
                  AND (ttl_seconds IS NULL OR array_dims(ttl_seconds) = dims) AND (request_ids IS NULL OR array_dims(request_ids) = dims)
                  AND array_dims(reservation_ids) = dims AND array_position(reservation_ids, NULL) IS NULL
                  -- One endpoint; every request clean as decide_batch's clean batch is (input_error's
                  -- checks: no control character, amounts and TTLs in range; lengths in phase 3).
                  AND endpoint_keys[1] = ALL (endpoint_keys)
                  AND NOT array_to_string(endpoint_keys[1:1] || callers || request_ids, '') ~ '[\u0001-\u001f\u007f-\u009f]'
                  AND 1 <= ALL (amounts) AND 9007199254740991 >= ALL (amounts)
                  AND (ttl_seconds IS NULL OR (1 <= ALL (ttl_seconds) AND 86400 >= ALL (ttl_seconds))), false) THEN
    RETURN ceilings.decide_batch(endpoint_keys, amounts, callers, destinations, destination_keys, idempotency_keys, ttl_seconds,
      request_ids, units_by_part, compact, input_errors, reservation_ids);
  END IF;

  -- Phase 2, the endpoint's lock (1), taken as its id is read, then under it (a statement of its
  -- own, so its snapshot is taken once every change before the lock committed) what decide_batch's
  -- phase 1 reads of the endpoint: its price, its limits with their current windows and answer
  -- parts (endpoint_config's columns). Kept from an earlier batch while its windows hold and no
  -- change has been made since (every change forgets it under the lock this batch holds shared):
  -- one index probe, where reading the endpoint, its ceilings and budgets was a fifth of a lone
  -- call's instructions (measured 2026-12-08, docs/enforcement.md). Else endpoint_config reads it,
  -- and keeps it unless the endpoint has a gate or an answer of its own: unknown or archived,
  -- several parts, a throttle, a cooldown or a limit at 0 (a kill switch, a budget switched off).
  SELECT x.id INTO endpoint_id
  FROM (SELECT s.id, pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(s.id)) FROM endpoints s WHERE s.key = endpoint_keys[1]) x;
  SELECT false, c.per_call_max, c.unit_price, c.prices, c.limit_ids, c.limit_scope, c.limit_measure, c.limit_value, c.limit_start,
         c.limit_end, c.limit_thresholds, c.entries
  INTO handed_over, per_call_max, unit_price, prices, limit_ids, limit_scope, limit_measure, limit_value, limit_start, limit_end, limit_thresholds, entries
  FROM endpoint_config_cache c
  WHERE c.id = endpoint_id AND c.valid_from <= t_now AND t_now < c.valid_until;
  IF NOT FOUND AND endpoint_id IS NOT NULL THEN
    SELECT * INTO handed_over, per_call_max, unit_price, prices, limit_ids, limit_scope, limit_measure, limit_value, limit_start, limit_end,
      limit_thresholds, entries
    FROM ceilings.endpoint_config(endpoint_id);
  END IF;
  IF coalesce(handed_over, true) THEN
    RETURN ceilings.decide_batch(endpoint_keys, amounts, callers, destinations, destination_keys, idempotency_keys, ttl_seconds,
      request_ids, units_by_part, compact, input_errors, reservation_ids);
  END IF;
  limit_count := cardinality(limit_ids);

  -- Phase 3, each request's caller (canonical, '' for none), worst case in micros and expiry, and
  -- the batch's callers with their accounts (decide_batch's phase 1): a request above the per-call
  -- max or costing more than can be counted, a caller missing where a limit counts per account, a
  -- caller too long once trimmed, a blocked account or one seen for the first time (decide_batch
  -- registers it) hands the batch over.
  SELECT r.callers, r.moneys, r.expiries, NOT r.pass OR k.unknown_or_blocked, coalesce(k.callers, '{}'), coalesce(k.plans, '{}')
  INTO req_caller, req_money, req_expires, handed_over, batch_callers, caller_plan
  FROM (SELECT array_agg(q.caller) AS callers, array_agg(q.money) AS moneys,
               array_agg(t_now + make_interval(secs => ttl_seconds[q.i])) FILTER (WHERE ttl_seconds IS NOT NULL) AS expiries,
               bool_and(amounts[q.i] <= per_call_max AND q.money <= 9007199254740991 AND length(q.caller) <= 200
                        AND coalesce(length(request_ids[q.i]) <= 100, true) AND (q.caller <> '' OR NOT 'a' = ANY (limit_scope))) AS pass
        FROM (SELECT g.i, coalesce(ceilings.canonical_caller(callers[g.i]), '') AS caller,
                     ceilings.micros_of(amounts[g.i]::numeric * unit_price) AS money
              FROM generate_series(1, n) AS g(i) OFFSET 0) q) r,
       LATERAL (SELECT array_agg(d.caller) AS callers, array_agg(a.plan_id) AS plans,
                       coalesce(bool_or(a.account IS NULL OR a.blocked_at IS NOT NULL), false) AS unknown_or_blocked
                FROM (SELECT DISTINCT u.caller FROM unnest(r.callers) AS u(caller) WHERE u.caller <> '') d
                LEFT JOIN accounts a ON a.account = d.caller) k;
  IF handed_over THEN
    RETURN ceilings.decide_batch(endpoint_keys, amounts, callers, destinations, destination_keys, idempotency_keys, ttl_seconds,
      request_ids, units_by_part, compact, input_errors, reservation_ids);
  END IF;

  -- Phase 4, what binds each account on a per-account limit (decide_batch's phases 1 and 4): its
  -- override in force (3, locked FOR SHARE in (limit id, caller) order), else its plan's value
  -- (the default plan's without one of its own), else the limit's own. In one statement, the
  -- plans' values beneath the overrides (the right side of || wins).
  IF 'a' = ANY (limit_scope) THEN
    SELECT coalesce((SELECT jsonb_object_agg(v.limit_id || '|' || k.caller, v.value)
                     FROM unnest(batch_callers, caller_plan) AS k(caller, plan_id)
                     JOIN plan_limit_values v ON v.plan_id = coalesce(k.plan_id, (SELECT p.id FROM plans p WHERE p.is_default))
                                             AND v.limit_id = ANY (limit_ids)), '{}')
        || coalesce((SELECT jsonb_object_agg(o.limit_id || '|' || o.caller, o.value)
                     FROM (SELECT ov.limit_id, ov.caller, ov.value FROM limit_overrides ov
                           WHERE ov.limit_id = ANY (limit_ids) AND limit_scope[array_position(limit_ids, ov.limit_id)] = 'a' AND ov.caller = ANY (batch_callers) AND (ov.expires_at IS NULL OR ov.expires_at > t_now)
                           ORDER BY ov.limit_id, ov.caller FOR SHARE OF ov) o), '{}')
    INTO account_values;
  END IF;
  -- Counters by limit, as decide_batch's phase 4 makes them for a batch charged as lists. Every
  -- limit global (account_values, read only for per-account limits, is NULL): the counters are the
  -- limits, one each in position order, taken whole (the pass below cost a lone call 3.4%).
  IF account_values IS NULL THEN
    counter_limit_id := limit_ids;
    counter_scope := array_fill(''::text, ARRAY[limit_count]);
    counter_start := limit_start;
    counter_end := limit_end;
    counter_measure := limit_measure;
    counter_limit := limit_value;
  END IF;
  FOR x IN 1 .. CASE WHEN account_values IS NULL THEN limit_count ELSE 0 END LOOP
    counter_base := counter_base || x - 1;
    counter_position := counter_position || x;
  END LOOP;
  FOR x IN 1 .. CASE WHEN account_values IS NULL THEN 0 ELSE limit_count END LOOP
    counter_base := counter_base || coalesce(cardinality(counter_position), 0);
    y := CASE WHEN limit_scope[x] = 'g' THEN 1 ELSE cardinality(batch_callers) END;
    counter_position := counter_position || array_fill(x, ARRAY[y]);
    counter_limit_id := counter_limit_id || array_fill(limit_ids[x], ARRAY[y]);
    counter_scope := counter_scope || CASE WHEN limit_scope[x] = 'g' THEN ARRAY[''] ELSE batch_callers END;
    counter_start := counter_start || array_fill(limit_start[x], ARRAY[y]);
    counter_end := counter_end || array_fill(limit_end[x], ARRAY[y]);
    counter_measure := counter_measure || array_fill(limit_measure[x], ARRAY[y]);
  END LOOP;
  -- Each counter's limit: a per-account one's value for its caller, in one statement for every
  -- counter (a statement a limit, inside the loop: with the thresholds read only for global
  -- limits, below, 157,000 more instructions a batch of 32 on three ceilings, 1.5%).
  IF account_values IS NOT NULL THEN
    SELECT array_agg(CASE WHEN limit_scope[c.p] = 'g' THEN limit_value[c.p]
                          ELSE coalesce((account_values ->> (limit_ids[c.p] || '|' || c.s))::bigint, limit_value[c.p]) END)
    INTO counter_limit
    FROM unnest(counter_position, counter_scope) AS c(p, s);
  END IF;

  -- Phase 5, the charges: request i charges every limit once, in position order, each on its
  -- counter (a global limit's one, else its caller's), with what its reservation keeps of each.
  SELECT array_agg(q.k), array_agg(q.a),
         array_agg(ROW(counter_limit_id[q.k], counter_scope[q.k], counter_start[q.k], counter_measure[q.k], q.a)::reservation_charge),
         sum(amounts[q.r]) FILTER (WHERE q.x = 1), sum(req_money[q.r]) FILTER (WHERE q.x = 1),
         string_agg(q.c::text, ',') FILTER (WHERE q.x = 1), string_agg(q.c::text, ',') FILTER (WHERE q.x = limit_count),
         string_agg(counter_limit[q.k]::text, ',')
  INTO charge_counter, charge_amount, batch_charges, v_units, v_money, first_charges, last_charges, charge_limits
  FROM (SELECT s + 1 AS c, s / limit_count + 1 AS r, s % limit_count + 1 AS x,
               counter_base[s % limit_count + 1] + CASE limit_scope[s % limit_count + 1] WHEN 'g' THEN 1
                 ELSE array_position(batch_callers, req_caller[s / limit_count + 1]) END AS k,
               CASE limit_measure[s % limit_count + 1] WHEN 'u' THEN amounts[s / limit_count + 1] WHEN 'c' THEN 1::bigint
                 ELSE req_money[s / limit_count + 1] END AS a
        FROM generate_series(0, n * limit_count - 1) AS s OFFSET 0) q;
  IF 'a' = ANY (limit_scope) THEN
    SELECT array_agg(d.demand), array_agg(d.charges)
    INTO counter_demand, counter_charges
    FROM (SELECT ch.k, sum(ch.a)::bigint AS demand, count(*) AS charges
          FROM unnest(charge_counter, charge_amount) AS ch(k, a) GROUP BY ch.k ORDER BY ch.k) d;
  ELSE
    -- Every counter is a global limit's, which every request charges: the batch's units, calls or
    -- money.
    FOR x IN 1 .. limit_count LOOP
      counter_demand := counter_demand || CASE limit_measure[x] WHEN 'u' THEN v_units WHEN 'c' THEN n ELSE v_money END::bigint;
      counter_charges := counter_charges || n::bigint;
    END LOOP;
  END IF;
  -- A charge on no counter, or a counter no charge reaches, fails the batch closed.
  IF array_position(charge_counter, NULL) IS NOT NULL OR cardinality(counter_demand) <> cardinality(counter_position) THEN
    RAISE EXCEPTION 'reserve_batch: % charges of % requests on % counters do not match', cardinality(charge_counter), n, cardinality(counter_position);
  END IF;

  -- Phase 6, the counters read without a lock, the missing ones made (6) in key order (decide_batch's
  -- phase 7). A batch that does not fit them as read is decide_batch's, which decides each request.
  SELECT coalesce(bool_and(counter_limit[k.idx] > 0 AND coalesce(u.held + u.settled, 0) + counter_demand[k.idx] <= counter_limit[k.idx]), true),
         coalesce(array_agg(k.idx) FILTER (WHERE u.limit_id IS NULL), '{}')
  INTO fits, missing
  FROM unnest(counter_limit_id) WITH ORDINALITY AS k(l, idx)
  LEFT JOIN counters u ON u.limit_id = k.l AND u.scope_key = counter_scope[k.idx] AND u.window_start = counter_start[k.idx];
  -- An existing row is not inserted again: that insert would wait for a batch that has updated it.
  IF cardinality(missing) > 0 THEN
    INSERT INTO counters (limit_id, scope_key, window_start, window_end)
    SELECT counter_limit_id[m], counter_scope[m], counter_start[m], counter_end[m] FROM unnest(missing) AS m
    ORDER BY counter_limit_id[m], counter_scope[m], counter_start[m]
    ON CONFLICT DO NOTHING;
  END IF;
  IF NOT fits THEN
    RETURN ceilings.decide_batch(endpoint_keys, amounts, callers, destinations, destination_keys, idempotency_keys, ttl_seconds,
      request_ids, units_by_part, compact, input_errors, reservation_ids);
  END IF;

  -- Phase 7, the reservations written before the counters are locked (7), as write_reservations
  -- writes a batch without keys: no key, so no conflict and no order. Its own insert, of the
  -- columns such a batch has: through write_reservations, whose lists of every column and of
  -- each request's first and last charge it would have to build, a batch of 32 on one ceiling
  -- took 5.5% more instructions (2026-12-07).
  INSERT INTO reservations (id, endpoint_id, caller, amount, money, prices, charges, created_at, expires_at)
  SELECT reservation_ids[g.i], endpoint_id, req_caller[g.i], amounts[g.i], req_money[g.i], prices,
         batch_charges[(g.i - 1) * limit_count + 1 : g.i * limit_count], t_now, coalesce(req_expires[g.i], t_now + interval '300 seconds')
  FROM generate_series(1, n) AS g(i);

  -- Phase 8, the counters written (7b), each once. One counter (a lone call or a batch on one
  -- global limit) is written by an update guarded by its room, as pgbench's hot-row UPDATE is:
  -- the counter is held from its write (or, when the update waited on another batch and then found
  -- no room, from that wait), and one statement does what two do for many, which are locked first,
  -- in key order in one statement, then written (a guarded update each took a lone call on three
  -- ceilings 6.8% more instructions; one took a lone call on one 7% fewer).
  -- Either way a batch that no longer fits (another batch took the room since phase 6) or that
  -- crosses one of a limit's alert thresholds (a global limit's own value times the percent, as
  -- decide_batch's phase 11 reads it; in numeric, since a value typed in SQL may be near 2^63) has
  -- what it wrote undone and is decide_batch's.
  IF cardinality(counter_position) = 1 THEN
    UPDATE counters u SET held = u.held + counter_demand[1], reservations = u.reservations + counter_charges[1]
    WHERE u.limit_id = counter_limit_id[1] AND u.scope_key = counter_scope[1] AND u.window_start = counter_start[1]
      AND u.held + u.settled + counter_demand[1] <= counter_limit[1]
    RETURNING u.held + u.settled - counter_demand[1],
      EXISTS (SELECT FROM jsonb_array_elements_text(limit_thresholds -> (counter_position[1] - 1)) AS p(pct)
              WHERE (u.held + u.settled - counter_demand[1]) * 100::numeric < p.pct::numeric * counter_limit[1]
                AND (u.held + u.settled) * 100::numeric >= p.pct::numeric * counter_limit[1])
    INTO v_used, alerting;
    IF NOT FOUND OR alerting THEN
      IF alerting THEN
        UPDATE counters u SET held = u.held - counter_demand[1], reservations = u.reservations - counter_charges[1]
        WHERE u.limit_id = counter_limit_id[1] AND u.scope_key = counter_scope[1] AND u.window_start = counter_start[1];
      END IF;
      DELETE FROM reservations WHERE id = ANY (reservation_ids);
      RETURN ceilings.decide_batch(endpoint_keys, amounts, callers, destinations, destination_keys, idempotency_keys, ttl_seconds,
        request_ids, units_by_part, compact, input_errors, reservation_ids);
    END IF;
    counter_used := ARRAY[v_used];
  ELSE
    -- Many counters: locked in key order, each one's place kept for the write, with whether every
    -- one still has room for the batch and none crosses a threshold.
    SELECT array_agg(l.used ORDER BY l.idx), array_agg(l.t ORDER BY l.idx), bool_and(l.room), bool_or(l.alerting), count(*)
    INTO counter_used, counter_tid, fits, alerting, locked
    FROM (SELECT k.idx, u.ctid AS t, u.held + u.settled AS used,
                 u.held + u.settled + counter_demand[k.idx] <= counter_limit[k.idx] AS room,
                 -- Only a global limit alerts (a per-account one's thresholds are []): no set
                 -- of thresholds is read for each caller's counter.
                 limit_scope[counter_position[k.idx]] = 'g'
                 AND EXISTS (SELECT FROM jsonb_array_elements_text(limit_thresholds -> (counter_position[k.idx] - 1)) AS p(pct)
                         WHERE (u.held + u.settled) * 100::numeric < p.pct::numeric * counter_limit[k.idx]
                           AND (u.held + u.settled + counter_demand[k.idx]) * 100::numeric >= p.pct::numeric * counter_limit[k.idx]) AS alerting
          FROM counters u
          JOIN unnest(counter_limit_id) WITH ORDINALITY AS k(l, idx)
            ON u.limit_id = k.l AND u.scope_key = counter_scope[k.idx] AND u.window_start = counter_start[k.idx]
          ORDER BY u.limit_id, u.scope_key, u.window_start
          FOR UPDATE OF u) l;
    IF locked <> cardinality(counter_position) THEN
      RAISE EXCEPTION 'reserve_batch: % of % counters found to lock', locked, cardinality(counter_position);
    END IF;
    IF NOT fits OR alerting THEN
      DELETE FROM reservations WHERE id = ANY (reservation_ids);
      RETURN ceilings.decide_batch(endpoint_keys, amounts, callers, destinations, destination_keys, idempotency_keys, ttl_seconds,
        request_ids, units_by_part, compact, input_errors, reservation_ids);
    END IF;

    -- Then one write per counter, found by its place (decide_batch's phase 10).
    v_seqscan := current_setting('enable_seqscan');
    PERFORM set_config('enable_seqscan', 'off', true);
    UPDATE counters u
    SET held = u.held + counter_demand[d.k], reservations = u.reservations + counter_charges[d.k]
    FROM unnest(counter_tid) WITH ORDINALITY AS d(t, k)
    WHERE u.ctid = d.t;
    GET DIAGNOSTICS v_written = ROW_COUNT;
    PERFORM set_config('enable_seqscan', v_seqscan, true);
    IF v_written <> cardinality(counter_tid) THEN
      RAISE EXCEPTION 'reserve_batch: % of % counters written', v_written, cardinality(counter_tid);
    END IF;
  END IF;

  -- The compact answer of a batch that fits whole: every grant null, its id the caller's, its
  -- charges (i - 1) * limit_count + 1 .. i * limit_count.
  RETURN jsonb_build_object('answers', to_jsonb(array_fill(NULL::jsonb, ARRAY[n])), 'reservationIds', NULL,
    'expiresAt', CASE WHEN ttl_seconds IS NULL THEN to_jsonb(t_now + interval '300 seconds') ELSE to_jsonb(req_expires) END,
    'firstCharge', first_charges, 'lastCharge', last_charges, 'chargeLimit', charge_limits,
    'chargeCounter', array_to_string(charge_counter, ','), 'chargeAmount', array_to_string(charge_amount, ','),
    'counterEntry', array_to_string(counter_position, ','), 'counters', entries,
    'counterUsed', array_to_string(counter_used, ','), 'chargeUsed', NULL);
END $$;
