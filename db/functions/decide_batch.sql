-- Decides a batch of reservation requests in arrival order, in one transaction.
--
-- Guarantees:
--   * each request is decided alone and all-or-nothing against the live values: every ceiling
--     (global and per caller, units and calls), the cooldown and every budget the endpoint belongs
--     to (in money: the request's worst case at its parts' prices, rounded up once) are checked and
--     charged together, and a refusal charges nothing (the throttle, which counts attempts, is the
--     one exception);
--   * a request the database cannot take is an input error for itself (request_error), never a
--     reason for the batch to raise;
--   * `granted` is answered only for a reservation held when the batch commits: a new one, or a
--     held one named again by its idempotency key; a key whose reservation is settled, released or
--     expired is answered `resolved` with that state (replay_answer);
--   * callers are canonical (canonical_caller) for overrides, counters, reservations and refusals;
--   * what binds an account on a per-caller ceiling or a per-account budget is its override (until
--     its end, if it has one), else
--     its plan's value (the default plan's when it was never assigned one), else the ceiling's or
--     budget's own value; a ceiling or budget switched off (0) binds every account; a blocked
--     account is refused on every endpoint (gate blocked). caller_limit and account_budget_limit
--     say the same for readers.
--
-- Lock order. Every batch, settle, release and sweep takes locks in this one order, each kind
-- sorted by its key, so two batches can never wait on each other in a cycle:
--   1. endpoint advisory locks, shared            by endpoint id
--   (ceilings and budgets rows are read, not locked: 1 binds every edit of them)
--   3. limit_overrides rows, FOR SHARE            by (limit id, caller)
--   3c. accounts rows, inserted if missing        by account (only callers seen for the first time)
--   4. throttle_counters rows (upsert)            by (endpoint id, caller)
--   5. cooldown advisory locks                    by (ceiling id, hashtext(scope key), scope key)
--   6. counters, inserted if missing              by (limit id, scope key, window start)
--   7. reservations idempotency index entries     by (endpoint id, caller, key)
--   7b. counters, FOR UPDATE                      by (limit id, scope key, window start)
--   7d. reservations written late (phase 9)       by (endpoint id, caller, key)
--   8. alerts (dedupe key, via fire_alert)        by counter order
--   9. refusals and refusal_hourly rows           by their keys (log_refusals)
-- Every edit of a ceiling, a budget or a budget's members takes 1 exclusively (on every member, for
-- a budget), by a trigger whatever path makes it (migration 0038): a batch reads those rows once it
-- holds 1, so it sees every edit committed before it and none after; settle, release and the sweeper lock the reservation row, then 7b in
-- the same order (resolve_charges). The reservations are written before the counters are
-- locked (7 before 7b), so the longest write of a batch is not part of the time its counters are
-- held; a batch waiting on a key another batch wrote holds no counter. Only when a counter is too
-- near its limit for the whole batch are they written after the decision (7d): then a storm of
-- refusals on a spent ceiling writes nothing it would have to delete.
--
-- Input: one array per field, request i being the i-th entry of each (an array left NULL is NULL
-- for every request; one of another length, numbered from other than 1 or of two dimensions is
-- refused, 22023):
-- endpoint_keys, amounts, callers, destinations, destination_keys, idempotency_keys, ttl_seconds
-- (NULL: 300), request_ids, units_by_part, and reservation_ids (the new reservations' ids, a
-- UUIDv7 each; NULL: made here, as the JSON entry's are). Typed arrays, so a request
-- is checked by its values (input_error: ranges, lengths, control characters, the batch's text
-- tested once for those) and no JSON is read; reserve_batch, the JSON entry, checks its requests
-- as JSON and passes each one's error in input_errors (an error answer, nothing else; a request
-- whose entry is NULL is checked here as the typed entry's are).
-- units_by_part: units per priced part ({"input": 1200, "output": 800}); every part of the
-- endpoint named, their total is the amount the units ceilings count. An endpoint with one part
-- takes an amount.
-- A budget's refusal: {status: refused, gate: budget, budgetId, budget (its key), limit, used, ...},
-- money in micros (contract version 6).
-- A blocked account's refusal: {status: refused, gate: blocked, limit: 0, remaining: 0, message}
-- (contract version 7).
-- Output, one answer per input in order: {status: granted|refused|resolved|error, ...}; an
-- archived endpoint answers error endpoint_archived, before any gate, and charges nothing. A
-- destination of the other kind than its cooldown's destinationKind (a phone number for a cooldown
-- per email address) answers error invalid_destination (contract version 4).
-- compact (the TypeScript library): a grant carries "charges": [from, to] instead of "remaining",
-- and the answer is {answers, reservationIds, expiresAt, firstCharge, lastCharge, chargeCounter,
-- chargeLimit, chargeAmount, chargeUsed, counterUsed, counterEntry, counters}, from which the
-- caller builds "remaining" itself, so no answer JSON is formatted while the counters are locked.
-- When the whole batch fits (the fast path), a grant's answer is null: its id, expiry and charges
-- are the request's entries in reservationIds, expiresAt, firstCharge and lastCharge, and
-- chargeUsed is null: a charge saw its counter's counterUsed (as locked) plus the chargeAmount of
-- the batch's charges on that counter up to its own (contract version 9: every statement and JSON
-- value computed while the counters are held is time every other batch on them waits). Contract
-- version 10: the lists of numbers and the ids are each one string, comma-separated (a jsonb
-- number is a numeric, and some 400 of them, made and copied, were a twentieth of a batch's
-- instructions), and counters holds each distinct description once, counterEntry naming a
-- counter's (every per-caller counter of a ceiling shares one). Contract version 13:
-- reservationIds is null when the caller sent reservation_ids (request i's id is its own i-th).
-- Contract version 14: expiresAt is one timestamp, every request's expiry, when ttl_seconds is
-- NULL (no request named a TTL): 32 printed timestamps were half of the compact answer's fixed
-- part.
-- The full answer, without compact, is unchanged.
--
-- Plans: every statement here runs on the same shapes call after call, but its arrays' lengths
-- change, and with them the custom plans' estimates, so the plan cache kept planning some of
-- them afresh on every call (the counters' update, 70-110 µs of a one-request batch). Generic
-- plans are made once per session. No plan changes what is locked or in which order: every
-- locking statement sorts by its key itself (ORDER BY ... FOR UPDATE, INSERT ... ORDER BY).
CREATE OR REPLACE FUNCTION ceilings.decide_batch(
  endpoint_keys text[], amounts bigint[], callers text[] DEFAULT NULL, destinations text[] DEFAULT NULL,
  destination_keys text[] DEFAULT NULL, idempotency_keys text[] DEFAULT NULL, ttl_seconds int[] DEFAULT NULL,
  request_ids text[] DEFAULT NULL, units_by_part jsonb[] DEFAULT NULL, compact boolean DEFAULT false, input_errors jsonb[] DEFAULT NULL,
  reservation_ids uuid[] DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = public, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  -- A variable has an initial value here only when it may be read before it is first assigned:
  -- every initializer is an expression evaluated, and set up, on every call (36 of them that
  -- nothing read were 2% of a batch of 32 and 4% of a lone call, 2026-12-07). An array that is
  -- only appended to starts NULL (NULL || x is {x}). A per-request list read only element by
  -- element (req_amount[i]) starts NULL too: its first element assigned, request i's, makes it
  -- start at i, which reading by index never sees. One read whole (unnest, cardinality,
  -- array_to_string, to_jsonb) starts as the list it has to be, request i its i-th element.
  n int := coalesce(cardinality(endpoint_keys), 0);
  -- The shape every array of the batch has: one dimension, numbered from 1 to n.
  dims text := CASE WHEN n = 0 THEN '' ELSE '[1:' || n || ']' END;
  -- Whether a text field of the batch may hold a control character: one test of all of them, so
  -- a batch without one checks none of its requests' fields one by one.
  controls boolean;
  -- Whether the batch's lists as wholes pass the checks of input_error that are not about a
  -- request's text lengths (below).
  clean boolean;
  t_now timestamptz := now();
  default_ttl CONSTANT interval := interval '300 seconds'; -- a reservation's life when its request names none
  answers jsonb[];               -- per request, once decided (input errors first)
  -- the batch's endpoints and their ceilings, in id order, with each ceiling's current window
  endpoint_ids int[];             -- the batch's endpoints, locked, in id order
  batch_endpoints endpoints[];
  batch_endpoint_keys text[];     -- their keys, in the same order
  batch_endpoint_ids int[];       -- their ids, in the same order
  batch_ceilings ceilings[];      -- by endpoint (in id order), then id: an endpoint's are together
  ceiling_window_start timestamptz[];
  ceiling_window_end timestamptz[];
  ceiling_endpoint int[] := '{}';
  caller_endpoints int[] := '{}';      -- endpoints with a per-caller ceiling
  destination_endpoints int[] := '{}'; -- endpoints with a cooldown
  killed_endpoints int[] := '{}';      -- endpoints with a ceiling switched off
  -- "limit id|caller" -> the value that binds that account there other than the limit's own: its
  -- override in force, else its plan's value (both kinds of per-account limit, one map)
  account_values jsonb;
  -- the budgets the batch's endpoints belong to, in id order, with their current windows, and
  -- the memberships among them as (position in batch_budgets, endpoint id) pairs
  batch_budgets budgets[];
  budget_window_start timestamptz[];
  budget_window_end timestamptz[];
  pair_budget int[];
  pair_endpoint int[];
  pair_per_account boolean[];
  account_budget_endpoints int[] := '{}'; -- endpoints in a per-account budget
  endpoint_prices jsonb;          -- endpoint id -> {part: picos a unit}
  endpoint_unit_price numeric[];          -- per batch endpoint, its first part's picos a unit (the one of a single-part endpoint)
  -- the batch's per-account limits (per-caller ceilings, per-account budgets), by limit id
  account_limit_ids int[];
  -- Every limit of the batch by its position: its ceilings (1 .. cardinality(batch_ceilings)), then
  -- its budgets. What a charge reads of its limit, as plain arrays (a ceilings or budgets row
  -- copied out of its array for each charge cost more than the charge itself):
  limit_ids int[] := '{}';         -- its row in limits
  limit_scope text[];      -- g(lobal), a(ccount: a per-caller ceiling or a per-account budget) or d(estination: a cooldown, or a calendar window per destination)
  limit_measure text[];    -- what a charge counts: u(nits), c(alls) or m(icros)
  limit_value bigint[];    -- its own value (0: switched off, which binds every account)
  limit_start timestamptz[];       -- its current window (a cooldown's first-hit window is each destination's, phase 5)
  limit_end timestamptz[];
  -- Each batch endpoint's limits, in charge order (its ceilings by id, then its budgets by id):
  -- positions endpoint_limits[endpoint_first_limit[e] .. endpoint_last_limit[e]].
  endpoint_limits int[] := '{}';
  endpoint_first_limit int[];
  endpoint_last_limit int[];
  -- A counter is a limit and a scope: '' for a global limit, else the scope's index in
  -- batch_callers or batch_destinations (each distinct once). counter_of[(position - 1) *
  -- scope_width + 1 + scope index] is its counter in this batch, 0 until charged: a charge finds
  -- its counter by arithmetic, with no key made or searched.
  batch_destinations text[];
  scope_width int;
  charged_as_lists boolean;        -- phase 4 charges the batch as lists
  limit_count int;
  counter_base int[];              -- then, per limit position: the counters before its own
  v_units numeric;
  counter_of int[];
  -- the batch's callers (canonical, distinct), each with its plan; the blocked ones; the new ones
  batch_callers text[];
  caller_plan int[];
  blocked_callers text[];
  new_callers text[];
  v_lock_timeout text;
  v_seqscan text := current_setting('enable_seqscan');
  -- per request
  req_endpoint int[] := array_fill(0, ARRAY[n]);
  req_endpoint_key text[];
  req_endpoint_position int[];  -- in batch_endpoints
  req_amount bigint[];
  req_parts jsonb[];  -- units per part, for several parts
  req_money bigint[];   -- the worst case in micros
  req_caller text[];
  req_destination text[];
  req_destination_key text[];
  req_idempotency_key text[];
  req_throttled boolean[] := array_fill(false, ARRAY[n]);
  req_first_charge int[] := array_fill(0, ARRAY[n]);
  req_last_charge int[] := array_fill(-1, ARRAY[n]);
  -- per charge: one request on one ceiling, in ceiling id order within a request
  charge_counter int[] := '{}';
  charge_amount bigint[] := '{}';
  charge_limit bigint[];
  charge_used bigint[];           -- the counter's used after this charge (grants only)
  -- per counter: one (limit, scope key, window), in the order the charges first name them
  counter_limit_id int[]; -- the counter's limit: its row is counters (limit id, scope, window start)
  counter_position int[] := '{}'; -- its limit's position
  counter_scope text[];
  counter_start timestamptz[];
  counter_end timestamptz[];
  counter_measure text[]; -- its limit's measure
  counter_used bigint[];  -- held + settled when locked
  counter_tid tid[];              -- its row's place, once locked
  counter_added bigint[]; -- charged by this batch
  counter_grants bigint[];
  global_counters int[] := '{}';   -- the counters of global limits, the ones with threshold alerts, in counter order
  answer_entries jsonb[] := '{}';  -- each limit's part of a grant's "remaining" once (a cooldown's once a counter)
  counter_entry int[];     -- per counter, its part's entry
  batch_charges reservation_charge[]; -- per charge, in charge order: what its reservation keeps
  -- throttle, per (endpoint, caller)
  throttle_key text[];
  throttle_attempts bigint[];     -- attempts counted before this batch, then one per request
  throttle_previous bigint[];     -- attempts of the previous minute
  throttle_failed boolean;
  -- the reservations: each request's id, expiry and (compact) grant answer, made before the
  -- counters are locked; written before them (req_written) or, late, after the decision
  req_id uuid[];
  req_expires timestamptz[];
  req_written boolean[] := array_fill(false, ARRAY[n]);
  written_early int[] := '{}';     -- the requests written early, when all of them were (req_written not yet marked)
  write_early boolean;
  gates_pass boolean := false;    -- phase 2 decided as one statement: every request passed its gates
  missing int[];                   -- counters without a row yet
  counter_demand bigint[]; -- per counter: the batch's charges on it, summed (phase 4)
  counter_charges bigint[]; -- their number
  counter_limit bigint[];  -- the value that binds it: an account's override or plan value, else its limit's
  locked int;                      -- counters locked
  every_written boolean;  -- every request still to decide was written early, none repeats a key
  refused_early boolean := false;  -- a request was refused before the counters were locked (phases 2 and 3)
  fits boolean;
  batch_known jsonb;               -- compact: the answer's part made before the counters are locked
  unwritten uuid[];       -- written early, then refused
  grant_request int[] := '{}';    -- granted, to write late
  first_with_key jsonb := '{}';   -- idempotency key -> first request of the batch that used it
  inserted uuid[];
  refused jsonb;                  -- the refusals to log, NULL when there are none
  ep endpoints;
  c ceilings;
  bg budgets;
  i int; j int; x int; y int; idx int;
  v_scope text;
  v_money numeric;
  v_key text;
  v_failed int;
  v_written bigint;               -- counters written in phase 10
  v_endpoint int;                 -- a request's endpoint: its position in batch_endpoints
  v_window_start timestamptz;
  v_window_end timestamptz;
  v_remaining jsonb;
  v_existing reservations;
  v_pct int;
  v_id_head text;
  existing_keys text[] := '{}';      -- "endpoint id|caller|key" of each reservation found by its key
  existing_reservations reservations[];
  rec record;
BEGIN
  -- Request i is the i-th element of every array: each one has the shape '[1:n]' (list_shape),
  -- which a list of another length, one numbered from other than 1 ('[0:1]={a,b}' or '[2:2]={a}',
  -- whose elements would go to other requests) or one of two dimensions does not have. An empty
  -- list's shape is ''; NULL is NULL for every request.
  IF coalesce(ceilings.list_shape(endpoint_keys), '') <> dims
     OR coalesce(ceilings.list_shape(amounts), dims) <> dims
     OR coalesce(ceilings.list_shape(callers), dims) <> dims
     OR coalesce(ceilings.list_shape(destinations), dims) <> dims
     OR coalesce(ceilings.list_shape(destination_keys), dims) <> dims
     OR coalesce(ceilings.list_shape(idempotency_keys), dims) <> dims
     OR coalesce(ceilings.list_shape(ttl_seconds), dims) <> dims
     OR coalesce(ceilings.list_shape(request_ids), dims) <> dims
     OR coalesce(ceilings.list_shape(units_by_part), dims) <> dims
     OR coalesce(ceilings.list_shape(input_errors), dims) <> dims
     OR coalesce(ceilings.list_shape(reservation_ids), dims) <> dims
     -- The ids a caller made are its own to keep unguessable (the library's: UUIDv7, a random
     -- rest from the operating system's source); a missing one would be a reservation without an id.
     OR array_position(reservation_ids, NULL) IS NOT NULL THEN
    RAISE EXCEPTION 'reserve_batch_arrays expects every array one-dimensional, numbered from 1 and as long as endpoint_keys (% requests), or NULL, and an id for every request in reservation_ids (or NULL for the database to make them)', n
      USING ERRCODE = '22023';
  END IF;
  -- An input error is an answer, never a way to make one up.
  -- (Two IFs: the outer one is a plain expression; with the query in it every call set one up.)
  IF input_errors IS NOT NULL THEN
    IF EXISTS (SELECT FROM unnest(input_errors) e WHERE e IS NOT NULL AND e->>'status' IS DISTINCT FROM 'error') THEN
      RAISE EXCEPTION 'reserve_batch_arrays: an input error must be an answer of status error' USING ERRCODE = '22023';
    END IF;
  END IF;
  IF n = 0 THEN
    RETURN CASE WHEN compact THEN jsonb_build_object('answers', '[]'::jsonb,
      'reservationIds', CASE WHEN reservation_ids IS NULL THEN '' END, 'expiresAt', '[]'::jsonb,
      'firstCharge', '', 'lastCharge', '', 'chargeCounter', '', 'chargeLimit', '', 'chargeAmount', '', 'chargeUsed', '',
      'counterUsed', '', 'counterEntry', '', 'counters', '[]'::jsonb) ELSE '[]'::jsonb END;
  END IF;

  -- Phase 1, configuration: endpoints, their locks (1), ceilings (2) and the callers' overrides (3).
  -- The endpoints' locks are taken as the ids are read, in id order (a volatile function in the
  -- select list of a sorted subquery runs after the sort).
  SELECT coalesce(array_agg(x.id), '{}') INTO endpoint_ids
  FROM (SELECT s.id, pg_advisory_xact_lock_shared(ceilings.endpoint_lock_key(s.id))
        FROM endpoints s
        WHERE s.key = ANY (endpoint_keys)
        ORDER BY s.id) x;

  -- Then, in one statement under the locks (a catalog change, archive or per-call max, that
  -- committed while this batch waited for them binds this batch, not the next one): the
  -- endpoints, their parts' prices, their ceilings and budgets, each with its current window.
  -- A batch on endpoints in no budget pays an index probe that finds nothing for those.
  -- Here and below, lists are aggregated from rows already in their order (a subquery's ORDER BY,
  -- or a function's rows as it returns them): an aggregate's own ORDER BY sorts its input again
  -- for each list, and those sorts were 2% of a batch (and of a lone call).
  SELECT ep_rows.all_rows, ep_rows.prices, ep_rows.keys, ep_rows.ids, ep_rows.unit_prices,
         ce_rows.all_rows, ce_rows.starts, ce_rows.ends,
         bu_rows.all_rows, bu_rows.starts, bu_rows.ends
  INTO batch_endpoints, endpoint_prices, batch_endpoint_keys, batch_endpoint_ids, endpoint_unit_price,
       batch_ceilings, ceiling_window_start, ceiling_window_end,
       batch_budgets, budget_window_start, budget_window_end
  FROM (SELECT coalesce(array_agg(e.s), '{}') AS all_rows, coalesce(array_agg(e.key), '{}') AS keys, coalesce(array_agg(e.id), '{}') AS ids,
               array_agg((e.parts->0->>'pricePico')::numeric) AS unit_prices,
               coalesce(jsonb_object_agg(e.id::text, (SELECT coalesce(jsonb_object_agg(p->>'name', (p->>'pricePico')::bigint), '{}')
                                                       FROM jsonb_array_elements(e.parts) p)), '{}') AS prices
        FROM (SELECT s, s.id, s.key, s.parts FROM endpoints s WHERE s.id = ANY (endpoint_ids) ORDER BY s.id) e) ep_rows,
       (SELECT coalesce(array_agg(cw.l), '{}') AS all_rows, array_agg(cw.window_start) AS starts, array_agg(cw.window_end) AS ends
        FROM (SELECT l, b.window_start, b.window_end
              FROM ceilings l
              JOIN endpoints s ON s.id = l.endpoint_id
              CROSS JOIN LATERAL ceilings.window_bounds(l.window, s.billing_day, l.window_seconds, t_now) b
              WHERE l.endpoint_id = ANY (endpoint_ids)
              ORDER BY l.endpoint_id, l.id) cw) ce_rows,
       (SELECT coalesce(array_agg(g.l), '{}') AS all_rows, array_agg(g.window_start) AS starts, array_agg(g.window_end) AS ends
        FROM (SELECT l, w.window_start, w.window_end
              FROM budgets l
              CROSS JOIN LATERAL ceilings.window_bounds(l.window, l.billing_day, NULL, t_now) w
              WHERE l.archived_at IS NULL
                AND l.id IN (SELECT m.budget_id FROM budget_members m WHERE m.endpoint_id = ANY (endpoint_ids))
              ORDER BY l.id) g) bu_rows;

  -- The limits by position: the ceilings, then the budgets (a loop over the rows in hand).
  FOREACH c IN ARRAY batch_ceilings LOOP
    IF c.scope = 'caller' THEN
      caller_endpoints := caller_endpoints || c.endpoint_id;
      account_limit_ids := account_limit_ids || c.limit_id;
    END IF;
    IF c.scope = 'destination' THEN destination_endpoints := destination_endpoints || c.endpoint_id; END IF;
    IF c.value = 0 THEN killed_endpoints := killed_endpoints || c.endpoint_id; END IF;
    ceiling_endpoint := ceiling_endpoint || c.endpoint_id;
    limit_ids := limit_ids || c.limit_id;
    limit_scope := limit_scope || CASE c.scope WHEN 'global' THEN 'g' WHEN 'caller' THEN 'a' ELSE 'd' END;
    limit_measure := limit_measure || CASE c.metric WHEN 'calls' THEN 'c' ELSE 'u' END;
    limit_value := limit_value || c.value;
  END LOOP;
  FOREACH bg IN ARRAY batch_budgets LOOP
    IF bg.scope = 'account' THEN account_limit_ids := account_limit_ids || bg.limit_id; END IF;
    limit_ids := limit_ids || bg.limit_id;
    limit_scope := limit_scope || CASE bg.scope WHEN 'account' THEN 'a' ELSE 'g' END;
    limit_measure := limit_measure || 'm'::text;
    limit_value := limit_value || bg.value;
  END LOOP;
  limit_start := ceiling_window_start || budget_window_start;
  limit_end := ceiling_window_end || budget_window_end;

  -- The budgets' memberships among the batch's endpoints, as (position in batch_budgets, endpoint
  -- id) pairs, by endpoint and then budget: like the ceilings, an endpoint's pairs are together.
  IF cardinality(batch_budgets) > 0 THEN
    SELECT array_agg(bb.ordinality::int ORDER BY m.endpoint_id, bb.ordinality), array_agg(m.endpoint_id ORDER BY m.endpoint_id, bb.ordinality),
           array_agg(bb.scope = 'account' ORDER BY m.endpoint_id, bb.ordinality),
           coalesce(array_agg(DISTINCT m.endpoint_id) FILTER (WHERE bb.scope = 'account'), '{}')
    INTO pair_budget, pair_endpoint, pair_per_account, account_budget_endpoints
    FROM unnest(batch_budgets) WITH ORDINALITY AS bb
    JOIN budget_members m ON m.budget_id = bb.id
    WHERE m.endpoint_id IN (SELECT u.id FROM unnest(batch_endpoints) u);
  END IF;
  -- Each endpoint's limits in charge order: its ceilings, then its budgets, read off both lists
  -- in one pass (both are by endpoint, in batch_endpoints' order). A limit the pass did not reach
  -- would be charged nowhere, so the batch fails closed instead. A batch of one endpoint (every
  -- lone call) has every limit, in position order: endpoint_limits stays NULL for that, the
  -- identity, and the pass is not run.
  IF cardinality(batch_endpoint_ids) <= 1 THEN
    endpoint_first_limit := ARRAY[1];
    endpoint_last_limit := ARRAY[cardinality(limit_ids)];
    endpoint_limits := NULL;
  END IF;
  i := 1;
  j := 1;
  FOR x IN 1 .. CASE WHEN endpoint_limits IS NULL THEN 0 ELSE cardinality(batch_endpoint_ids) END LOOP
    endpoint_first_limit := endpoint_first_limit || cardinality(endpoint_limits) + 1;
    WHILE i <= cardinality(ceiling_endpoint) AND ceiling_endpoint[i] = batch_endpoint_ids[x] LOOP
      endpoint_limits := endpoint_limits || i;
      i := i + 1;
    END LOOP;
    WHILE j <= coalesce(cardinality(pair_budget), 0) AND pair_endpoint[j] = batch_endpoint_ids[x] LOOP
      endpoint_limits := endpoint_limits || cardinality(batch_ceilings) + pair_budget[j];
      j := j + 1;
    END LOOP;
    endpoint_last_limit := endpoint_last_limit || cardinality(endpoint_limits);
  END LOOP;
  IF endpoint_limits IS NOT NULL AND (i <= cardinality(ceiling_endpoint) OR j <= coalesce(cardinality(pair_budget), 0)) THEN
    RAISE EXCEPTION 'reserve_batch: a limit of the batch belongs to none of its endpoints';
  END IF;

  -- Each request's input error (input_error: ranges, lengths, control characters, the batch's text
  -- tested once for those; the JSON entry, reserve_batch, checked its requests already), and its
  -- fields as every read below takes them: the caller canonical ('' for none), trimmed once here,
  -- the destination and key, and its reservation's id and expiry (its TTL's end). One statement for
  -- the batch, not an assignment a field a request: a request answered here is never read by those
  -- fields, and an id drawn for one is never written.
  -- Each id is a UUID version 7 (milliseconds, then 74 random bits), so each new reservation lands
  -- at the right edge of the primary key. The batch's milliseconds are written once
  -- ("pppppppp-pppp-7"); each id is them, then the random rest of a version 4 UUID from its 16th
  -- character (its variant bits kept): bit arithmetic on every id cost 7 µs a request. Made here,
  -- not by a statement of their own (82,000 instructions a batch of 32, 34,000 a lone call,
  -- measured 2026-12-06).
  -- A caller may send the ids (reservation_ids), made as these are: the library does, since a
  -- random UUID made here costs 8,600 instructions (the operating system's random source, asked
  -- once an id), a thirtieth of a batch's work a request (2026-12-06).
  IF reservation_ids IS NULL THEN
    v_id_head := lpad(to_hex((extract(epoch FROM t_now) * 1000)::bigint), 12, '0');
    v_id_head := substr(v_id_head, 1, 8) || '-' || substr(v_id_head, 9, 4) || '-7';
  END IF;
  -- For both entries: the callers' statement below reads it too (a caller's canonical form is the
  -- one sent, trimmed, so it holds a control character only if the one sent does).
  controls := array_to_string(endpoint_keys || callers || destinations || destination_keys
    || idempotency_keys || request_ids, '') ~ '[\u0001-\u001f\u007f-\u009f]';
  -- A batch is clean when its lists as wholes pass input_error's checks that are not about one
  -- request's text (no control character, no parts, no destination, every amount and TTL in
  -- range; here) and each request's caller, request id and idempotency key are within
  -- input_error's lengths (the statement below). Then no request has an input error and
  -- input_error is not called: inlined, it is an expression of a page, and setting it up in a
  -- statement cost 3% of a batch of 32 (2026-12-07) whether a request needed it or not. A batch
  -- that is not clean has each request checked by input_error, which answers; so this only ever
  -- skips calls that answer NULL. Its bounds are input_error's: a change there is one here.
  clean := NOT controls AND units_by_part IS NULL AND destinations IS NULL AND destination_keys IS NULL
    AND coalesce(1 <= ALL (amounts) AND 9007199254740991 >= ALL (amounts), false)
    AND (ttl_seconds IS NULL OR coalesce(1 <= ALL (ttl_seconds) AND 86400 >= ALL (ttl_seconds), false));
  -- A request without an input error from the JSON entry is checked by its typed values all the
  -- same: input_errors names errors, and a NULL in it (from the JSON entry, or a caller of this
  -- function that passed it by mistake) never lets an amount of -5 (which made the whole batch
  -- raise on the reservations' CHECK) or a caller with a control character through. The JSON
  -- entry pays for the check twice: 172,000 instructions a batch of 32 (1.3%).
  SELECT coalesce(bool_and(clean AND input_errors[g.i] IS NULL AND coalesce(length(callers[g.i]) <= 200, true)
                           AND coalesce(length(request_ids[g.i]) <= 100, true) AND coalesce(length(idempotency_keys[g.i]) <= 200, true)), false),
         array_agg(coalesce(ceilings.canonical_caller(callers[g.i]), '')),
         array_agg((v_id_head || substr(gen_random_uuid()::text, 16))::uuid) FILTER (WHERE reservation_ids IS NULL),
         array_agg(t_now + coalesce(make_interval(secs => ttl_seconds[g.i]), default_ttl)) FILTER (WHERE ttl_seconds IS NOT NULL),
         array_agg(nullif(btrim(destinations[g.i]), '')) FILTER (WHERE destinations IS NOT NULL),
         array_agg(coalesce(nullif(btrim(destination_keys[g.i]), ''), ceilings.canonical_destination(destinations[g.i])))
           FILTER (WHERE destinations IS NOT NULL OR destination_keys IS NOT NULL),
         array_agg(nullif(idempotency_keys[g.i], '')) FILTER (WHERE idempotency_keys IS NOT NULL)
  INTO clean, req_caller, req_id, req_expires, req_destination, req_destination_key, req_idempotency_key
  FROM generate_series(1, n) AS g(i);
  IF clean THEN
    answers := array_fill(NULL::jsonb, ARRAY[n]);
  ELSE
    SELECT array_agg(coalesce(input_errors[g.i],
                              ceilings.input_error(endpoint_keys[g.i], callers[g.i], destinations[g.i], destination_keys[g.i],
                                idempotency_keys[g.i], request_ids[g.i], units_by_part[g.i], amounts[g.i], NULL, ttl_seconds[g.i], controls)))
    INTO answers
    FROM generate_series(1, n) AS g(i);
  END IF;
  -- A field no request has comes as NULL (the library sends it so) and its list stays NULL, which
  -- every read below takes as NULL for each request: the FILTERs above skip computing it per
  -- request. The ids the caller sent are the ids; without a TTL every expiry is the default's.
  req_id := coalesce(req_id, reservation_ids);
  req_expires := coalesce(req_expires, array_fill(t_now + default_ttl, ARRAY[n]));
  -- The batch's callers, canonical and distinct, each read once here and named by every read after
  -- it: their accounts (plan and block, one keyed lookup each), their overrides, their plans'
  -- values. Accounts are read without a lock: an assignment or a block committed before this
  -- statement binds this batch, one committed later binds the next. A caller seen for the first
  -- time is registered below (3c), so staff can find it; in account order (the insert sorts
  -- them), so two batches registering the same new accounts wait in one order.
  -- A caller's plan is its account's (NULL: the default plan, which the plans' values below read;
  -- a batch without per-account limits reads none). Every aggregate is set up on every call: the
  -- default plan's read and a sort of the new callers here were 29,000 instructions (2026-12-07).
  SELECT coalesce(array_agg(k.caller), '{}'), coalesce(array_agg(a.plan_id), '{}'),
         coalesce(array_agg(k.caller) FILTER (WHERE a.blocked_at IS NOT NULL), '{}'),
         coalesce(array_agg(k.caller) FILTER (WHERE a.account IS NULL), '{}')
  INTO batch_callers, caller_plan, blocked_callers, new_callers
  FROM (SELECT DISTINCT q.caller FROM unnest(req_caller) WITH ORDINALITY AS q(caller, i)
        WHERE endpoint_keys[q.i] = ANY (batch_endpoint_keys)) k
  LEFT JOIN accounts a ON a.account = k.caller
  WHERE k.caller <> '' AND char_length(k.caller) <= 200 AND (NOT controls OR NOT ceilings.has_control_chars(k.caller));

  -- The batch's per-account limits (account_limit_ids, phase 1) are read by the overrides and the
  -- plans' values below; none without a per-caller ceiling or a per-account budget, and then
  -- neither read runs.
  -- The accounts' own values on them (3): one read of limit_overrides, in (limit id, caller) order;
  -- an override past its end binds nothing, whether or not the worker has removed it yet.
  IF cardinality(account_limit_ids) > 0 AND cardinality(batch_callers) > 0 THEN
    SELECT coalesce(jsonb_object_agg(o.limit_id || '|' || o.caller, o.value), '{}')
    INTO account_values
    FROM (SELECT ov.limit_id, ov.caller, ov.value FROM limit_overrides ov
          WHERE ov.limit_id = ANY (account_limit_ids) AND ov.caller = ANY (batch_callers) AND (ov.expires_at IS NULL OR ov.expires_at > t_now)
          ORDER BY ov.limit_id, ov.caller FOR SHARE OF ov) o;
  END IF;

  -- Registering (3c) is bookkeeping, never a reason to refuse: a new account another transaction is
  -- inserting (a bulk assignment of 10,000 not yet committed) would make this insert wait for it
  -- with the batch's locks held, so it waits 50 ms at most and is then skipped (the other
  -- transaction registers the account, or the caller's next batch does).
  IF cardinality(new_callers) > 0 THEN
    v_lock_timeout := current_setting('lock_timeout');
    BEGIN
      PERFORM set_config('lock_timeout', '50ms', true);
      INSERT INTO accounts (account) SELECT u FROM unnest(new_callers) u ORDER BY u ON CONFLICT DO NOTHING;
      PERFORM set_config('lock_timeout', v_lock_timeout, true);
    EXCEPTION WHEN lock_not_available THEN
      PERFORM set_config('lock_timeout', v_lock_timeout, true);
    END;
  END IF;
  -- Their plans' values, beneath their overrides (the right side of || wins). Plan values change
  -- only under the endpoint locks this batch holds shared, like a ceiling's value. The default
  -- plan, a caller's without one of its own, is read once (an InitPlan: at most one plan is the
  -- default, by a unique index), not scanned for every caller.
  IF cardinality(account_limit_ids) > 0 AND cardinality(batch_callers) > 0 THEN
    SELECT coalesce(jsonb_object_agg(v.limit_id || '|' || k.caller, v.value), '{}') || account_values
    INTO account_values
    FROM unnest(batch_callers, caller_plan) AS k(caller, plan_id)
    JOIN plan_limit_values v ON v.plan_id = coalesce(k.plan_id, (SELECT p.id FROM plans p WHERE p.is_default))
                            AND v.limit_id = ANY (account_limit_ids);
  END IF;

  -- The reservations that already hold one of the batch's idempotency keys, read in one statement
  -- (a probe of the key's index each) rather than one query a request, and no query when no
  -- request names a key. A key another batch commits after this read is found by the write below
  -- (ON CONFLICT), and answered the same way.
  IF array_to_string(idempotency_keys, '') <> '' THEN
    SELECT coalesce(array_agg(x.k), '{}'), coalesce(array_agg(x.rr), '{}') INTO existing_keys, existing_reservations
    FROM (SELECT DISTINCT be.id AS endpoint_id, q.caller, q.key
          FROM unnest(endpoint_keys, req_caller, idempotency_keys) AS q(endpoint_key, caller, key)
          JOIN unnest(batch_endpoints) be ON be.key = q.endpoint_key
          WHERE q.key <> '') q
    CROSS JOIN LATERAL (SELECT q.endpoint_id || '|' || q.caller || '|' || q.key AS k, rr FROM reservations rr
                        WHERE rr.endpoint_id = q.endpoint_id AND rr.caller = q.caller AND rr.idempotency_key = q.key) x;
  END IF;

  -- Phase 2, validation and the cheap gates: input, idempotent replay, blocked account, per-call
  -- max, kill switch.
  -- First as one statement, when no request of the batch can fail a gate but by its own numbers:
  -- one endpoint, live, priced by one part or none, without throttle or kill; no request with
  -- parts; no blocked account, replayable key or cooldown; and a caller for every request when the
  -- endpoint counts per caller or per account. Then a request passes every gate the loop below
  -- walks if it names that endpoint, asks no more than its per-call max and no more money than
  -- can be counted; the statement makes the lists the loop would make, and if any request does
  -- not pass, they are set back and the loop answers the batch, as it answers every other batch.
  -- (A key already held is left to the loop too, which answers it here; the early write's ON
  -- CONFLICT would find it as well, but only when the batch is written early.)
  -- The loop's expressions cost about 9,500 instructions a request, the statement some 37,000 a
  -- batch and 2,000 a request, so a batch of fewer than 8 is left to the loop (2026-12-07: a
  -- batch of 32 on one ceiling 7,501,650 to 7,210,000, on three 11,261,019 to 10,960,000).
  -- (Two IFs: a lone call sets up the first one's expression alone, not the whole test.)
  IF n >= 8 THEN
    ep := batch_endpoints[1];
    IF cardinality(batch_endpoints) = 1 AND ep.archived_at IS NULL
       AND (units_by_part IS NULL OR cardinality(array_remove(units_by_part, NULL)) = 0)
       AND jsonb_array_length(ep.parts) <= 1 AND ep.throttle_per_minute IS NULL
       AND cardinality(killed_endpoints) = 0 AND cardinality(blocked_callers) = 0
       AND cardinality(existing_keys) = 0 AND cardinality(destination_endpoints) = 0
       AND ((cardinality(caller_endpoints) = 0 AND cardinality(account_budget_endpoints) = 0) OR NOT '' = ANY (req_caller)) THEN
      -- A request's money is made a bigint only when the request passes, as the loop makes it
      -- only then; it is computed once a request (OFFSET 0 keeps the planner from copying its
      -- expression into each place that reads it).
      SELECT coalesce(bool_and(answers[g.i] IS NOT NULL OR p.pass), false),
             array_agg(CASE WHEN answers[g.i] IS NULL THEN ep.id ELSE 0 END),
             array_agg(CASE WHEN answers[g.i] IS NULL THEN ep.key ELSE '' END),
             array_agg(CASE WHEN answers[g.i] IS NULL THEN 1 ELSE 0 END),
             array_agg(CASE WHEN answers[g.i] IS NULL THEN amounts[g.i] ELSE 0 END),
             array_agg(CASE WHEN answers[g.i] IS NOT NULL THEN 0 WHEN p.pass THEN m.money::bigint END)
      INTO gates_pass, req_endpoint, req_endpoint_key, req_endpoint_position, req_amount, req_money
      FROM generate_series(1, n) AS g(i)
      CROSS JOIN LATERAL (SELECT ceilings.micros_of(amounts[g.i]::numeric * endpoint_unit_price[1]) AS money OFFSET 0) m
      CROSS JOIN LATERAL (SELECT coalesce(endpoint_keys[g.i] = ep.key AND NOT coalesce(amounts[g.i] > ep.per_call_max, false)
                                          AND NOT coalesce(m.money > 9007199254740991, false), false) AS pass) p;
      IF NOT gates_pass THEN
        req_endpoint := array_fill(0, ARRAY[n]);
        req_endpoint_key := array_fill(''::text, ARRAY[n]);
        req_endpoint_position := array_fill(0, ARRAY[n]);
        req_amount := array_fill(0::bigint, ARRAY[n]);
        req_money := array_fill(0::bigint, ARRAY[n]);
      END IF;
    END IF;
  END IF;
  FOR i IN 1 .. CASE WHEN gates_pass THEN 0 ELSE n END LOOP
    CONTINUE WHEN answers[i] IS NOT NULL;
    v_endpoint := array_position(batch_endpoint_keys, endpoint_keys[i]);
    ep := batch_endpoints[v_endpoint];
    IF ep.id IS NULL THEN
      answers[i] := jsonb_build_object('status', 'error', 'code', 'unknown_endpoint',
        'message', format('unknown endpoint %L', endpoint_keys[i]));
      CONTINUE;
    END IF;
    IF ep.archived_at IS NOT NULL THEN
      answers[i] := jsonb_build_object('status', 'error', 'code', 'endpoint_archived',
        'message', format('endpoint %s is archived: every reservation is refused and nothing is charged', ep.key));
      CONTINUE;
    END IF;
    req_endpoint[i] := ep.id;
    req_endpoint_key[i] := ep.key;
    req_endpoint_position[i] := v_endpoint;
    -- The amount, or the parts and their total. One part's units are its amount; several parts
    -- are kept, since money and a settle go part by part.
    IF units_by_part[i] IS NOT NULL THEN
      answers[i] := ceilings.parts_error(units_by_part[i], ep.parts, ep.key, false);
      CONTINUE WHEN answers[i] IS NOT NULL;
      req_amount[i] := (SELECT sum((u.value #>> '{}')::bigint) FROM jsonb_each(units_by_part[i]) u);
      IF amounts[i] <> req_amount[i] THEN
        answers[i] := jsonb_build_object('status', 'error', 'code', 'invalid_amount',
          'message', format('amount %s is not the total of the parts (%s): send one or the other', amounts[i], req_amount[i]));
        CONTINUE;
      END IF;
      IF jsonb_array_length(ep.parts) > 1 THEN
        req_parts[i] := units_by_part[i];
      END IF;
    ELSIF jsonb_array_length(ep.parts) > 1 THEN
      answers[i] := jsonb_build_object('status', 'error', 'code', 'invalid_parts',
        'message', format('%s prices its parts apart (%s): send parts, not one amount', ep.key,
          (SELECT string_agg(p->>'name', ', ') FROM jsonb_array_elements(ep.parts) p)));
      CONTINUE;
    ELSE
      req_amount[i] := amounts[i];
    END IF;

    -- Only a request without a caller on an endpoint with a per-caller ceiling, or one on an
    -- endpoint with a cooldown, can fail here, so only those walk the ceilings (where the last
    -- failing one in id order answers).
    IF req_caller[i] = '' AND ep.id = ANY (account_budget_endpoints) THEN
      FOR x IN 1 .. cardinality(pair_budget) LOOP
        CONTINUE WHEN pair_endpoint[x] <> ep.id OR NOT pair_per_account[x];
        answers[i] := jsonb_build_object('status', 'error', 'code', 'caller_required',
          'message', format('endpoint %s is in the per-account budget %s: caller is required', ep.key, batch_budgets[pair_budget[x]].key));
        EXIT;
      END LOOP;
      CONTINUE;
    END IF;
    IF (req_caller[i] = '' AND ep.id = ANY (caller_endpoints)) OR ep.id = ANY (destination_endpoints) THEN
    FOREACH c IN ARRAY batch_ceilings LOOP
      CONTINUE WHEN c.endpoint_id <> ep.id;
      IF c.scope = 'caller' AND req_caller[i] = '' THEN
        answers[i] := jsonb_build_object('status', 'error', 'code', 'caller_required',
          'message', format('endpoint %s has a per-caller ceiling: caller is required', ep.key));
      ELSIF c.scope = 'destination' AND req_destination_key[i] IS NULL THEN
        answers[i] := jsonb_build_object('status', 'error', 'code', 'destination_required',
          'message', format('endpoint %s has a cooldown: destination is required', ep.key));
      -- A cooldown per inbox cannot be dodged with a phone number, nor one per phone with an
      -- address or a device id: a destination of another kind would open a window of its own.
      -- A phone is E.164 from the library, or digits as typed from SQL callers.
      ELSIF c.scope = 'destination' AND c.destination_kind IS NOT NULL
          AND NOT ((c.destination_kind = 'email' AND position('@' IN req_destination_key[i]) > 0)
                OR (c.destination_kind = 'phone' AND req_destination_key[i] ~ '^\+?[0-9 ().-]{7,}$')) THEN
        answers[i] := jsonb_build_object('status', 'error', 'code', 'invalid_destination',
          'message', format('endpoint %s has a cooldown per %s: the destination must be one', ep.key,
            CASE c.destination_kind WHEN 'email' THEN 'email address' ELSE 'phone number' END));
      END IF;
    END LOOP;
    CONTINUE WHEN answers[i] IS NOT NULL;
    END IF;

    idx := CASE WHEN req_idempotency_key[i] IS NOT NULL AND cardinality(existing_keys) > 0
                THEN array_position(existing_keys, ep.id || '|' || req_caller[i] || '|' || req_idempotency_key[i]) END;
    IF idx IS NOT NULL THEN
      answers[i] := ceilings.replay_answer(existing_reservations[idx], req_amount[i], req_destination_key[i], req_parts[i]);
      CONTINUE;
    END IF;

    -- A blocked account is refused everywhere, even on an endpoint without a per-caller ceiling.
    IF req_caller[i] <> '' AND req_caller[i] = ANY (blocked_callers) THEN
      answers[i] := jsonb_build_object('status', 'refused', 'gate', 'blocked', 'limit', 0, 'remaining', 0,
        'message', format('account %s is blocked', req_caller[i]));
      CONTINUE;
    END IF;

    IF req_amount[i] > ep.per_call_max THEN
      answers[i] := jsonb_build_object('status', 'refused', 'gate', 'per_call_max',
        'limit', ep.per_call_max, 'message', format('amount %s is above the per-call max of %s', req_amount[i], ep.per_call_max));
      CONTINUE;
    END IF;

    -- The worst case in money: units times picos, rounded up once to a whole micro. One part is
    -- money_of's arithmetic inline (micros_of is inlined; money_of is a query each request).
    IF req_parts[i] IS NULL THEN
      v_money := ceilings.micros_of(req_amount[i]::numeric * endpoint_unit_price[v_endpoint]);
    ELSE
      v_money := ceilings.money_of(req_parts[i], ceilings.part_prices(ep.parts));
    END IF;
    IF v_money > 9007199254740991 THEN
      answers[i] := jsonb_build_object('status', 'error', 'code', 'invalid_amount',
        'message', format('this call''s worst case, %s micros, is more money than can be counted', v_money));
      CONTINUE;
    END IF;
    req_money[i] := v_money;

    IF ep.id = ANY (killed_endpoints) THEN
    FOREACH c IN ARRAY batch_ceilings LOOP
      IF c.endpoint_id = ep.id AND c.value = 0 THEN
        answers[i] := jsonb_build_object('status', 'refused', 'gate', 'kill_switch', 'ceilingId', c.id,
          'limit', 0, 'remaining', 0, 'message', format('endpoint %s is switched off', ep.key));
        EXIT;
      END IF;
    END LOOP;
    CONTINUE WHEN answers[i] IS NOT NULL;
    END IF;
    req_throttled[i] := ep.throttle_per_minute IS NOT NULL AND req_caller[i] <> '';
  END LOOP;

  -- Phase 3, throttle (4): soft and approximate (this minute plus the previous one, weighted by
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
    FOR i IN 1 .. n LOOP
      CONTINUE WHEN NOT req_throttled[i];
      SELECT * INTO ep FROM unnest(batch_endpoints) s WHERE s.id = req_endpoint[i];
      IF throttle_failed THEN
        IF NOT ep.throttle_fail_open THEN
          answers[i] := jsonb_build_object('status', 'refused', 'gate', 'unavailable', 'reason', 'lock_timeout', 'message', 'throttle unavailable');
        END IF;
        CONTINUE;
      END IF;
      idx := array_position(throttle_key, req_endpoint[i] || '|' || req_caller[i]);
      throttle_attempts[idx] := throttle_attempts[idx] + 1;
      IF throttle_attempts[idx] + throttle_previous[idx] * (60 - extract(second FROM t_now)) / 60 > ep.throttle_per_minute THEN
        answers[i] := jsonb_build_object('status', 'refused', 'gate', 'throttle', 'limit', ep.throttle_per_minute,
          'message', format('more than %s requests a minute from this caller', ep.throttle_per_minute));
      END IF;
    END LOOP;
  END IF;

  -- Phase 4, the counters each request would charge: one per limit of its endpoint, in charge
  -- order. A global limit has one counter; a per-account limit one per caller, a per-destination
  -- one per destination, each numbered by its index among the batch's distinct ones.
  IF 'd' = ANY (limit_scope) THEN
    SELECT coalesce(array_agg(DISTINCT q.d) FILTER (WHERE q.d IS NOT NULL), '{}') INTO batch_destinations FROM unnest(req_destination_key) AS q(d);
  END IF;
  scope_width := greatest(cardinality(batch_callers), cardinality(batch_destinations)) + 1;
  counter_of := array_fill(0, ARRAY[greatest(cardinality(limit_ids) * scope_width, 1)]);
  -- A batch every request of which passed phase 2's statement (none answered, by an input error
  -- or a gate), on an endpoint without a cooldown, is charged as lists, not by the loop below
  -- (some 10 statements a charge): a batch of 32 took 3.6% fewer instructions on one ceiling,
  -- 2.6% on three and 3.4% on the full shape (2026-12-07). Every request charges every limit
  -- once, in position order, so request i's charges are (i - 1) * L + 1 .. i * L. The counters
  -- are numbered by limit: a global limit's one, a per-account limit's one for each of the
  -- batch's callers in batch_callers' order (every request names one of them there: phase 2's
  -- statement saw to that), the counters before limit x's being counter_base[x]. The numbers are
  -- the batch's own (its lists and the compact answer name them), so they need not be the loop's,
  -- which numbers counters as charges first reach them. A counter's demand is its charges summed:
  -- a global limit's is the batch's units, calls or money, and a batch of global limits needs
  -- only those.
  limit_count := cardinality(limit_ids);
  charged_as_lists := gates_pass AND limit_count > 0 AND array_remove(answers, NULL) = '{}' AND NOT 'd' = ANY (limit_scope);
  IF charged_as_lists THEN
    FOR x IN 1 .. limit_count LOOP
      counter_base := counter_base || coalesce(cardinality(counter_position), 0);
      IF limit_scope[x] = 'g' THEN
        global_counters := global_counters || coalesce(cardinality(counter_position), 0) + 1;
        counter_position := counter_position || x;
        counter_limit_id := counter_limit_id || limit_ids[x];
        counter_scope := counter_scope || ''::text;
        counter_start := counter_start || limit_start[x];
        counter_end := counter_end || limit_end[x];
        counter_measure := counter_measure || limit_measure[x];
        counter_limit := counter_limit || limit_value[x];
        CONTINUE;
      END IF;
      -- A per-account limit: what binds each account, as the loop's new counter says, is its
      -- override in force or plan value, else the limit's own; a limit switched off (0) binds
      -- every account.
      y := cardinality(batch_callers);
      counter_position := counter_position || array_fill(x, ARRAY[y]);
      counter_limit_id := counter_limit_id || array_fill(limit_ids[x], ARRAY[y]);
      counter_scope := counter_scope || batch_callers;
      counter_start := counter_start || array_fill(limit_start[x], ARRAY[y]);
      counter_end := counter_end || array_fill(limit_end[x], ARRAY[y]);
      counter_measure := counter_measure || array_fill(limit_measure[x], ARRAY[y]);
      counter_limit := counter_limit || CASE WHEN limit_value[x] = 0 THEN array_fill(0::bigint, ARRAY[y])
        ELSE (SELECT array_agg(coalesce((account_values ->> (limit_ids[x] || '|' || u.caller))::bigint, limit_value[x]))
              FROM unnest(batch_callers) AS u(caller)) END;
    END LOOP;
    SELECT array_agg(counter_base[s % limit_count + 1] + CASE limit_scope[s % limit_count + 1] WHEN 'g' THEN 1
                       ELSE array_position(batch_callers, req_caller[s / limit_count + 1]) END),
           array_agg(CASE limit_measure[s % limit_count + 1] WHEN 'u' THEN req_amount[s / limit_count + 1] WHEN 'c' THEN 1::bigint
                     ELSE req_money[s / limit_count + 1] END),
           array_agg(s + 1) FILTER (WHERE s % limit_count = 0), array_agg(s + 1) FILTER (WHERE s % limit_count = limit_count - 1),
           sum(req_amount[s / limit_count + 1]) FILTER (WHERE s % limit_count = 0), sum(req_money[s / limit_count + 1]) FILTER (WHERE s % limit_count = 0)
    INTO charge_counter, charge_amount, req_first_charge, req_last_charge, v_units, v_money
    FROM generate_series(0, n * limit_count - 1) AS s;
    IF 'a' = ANY (limit_scope) THEN
      SELECT array_agg(d.demand), array_agg(d.charges)
      INTO counter_demand, counter_charges
      FROM (SELECT ch.k, sum(ch.a)::bigint AS demand, count(*) AS charges
            FROM unnest(charge_counter, charge_amount) AS ch(k, a) GROUP BY ch.k ORDER BY ch.k) d;
    ELSE
      -- Every counter is a global limit's, which every request charges: the batch's units, calls
      -- or money.
      FOR x IN 1 .. limit_count LOOP
        counter_demand := counter_demand || CASE limit_measure[x] WHEN 'u' THEN v_units WHEN 'c' THEN n ELSE v_money END::bigint;
        counter_charges := counter_charges || n::bigint;
      END LOOP;
    END IF;
    -- A per-account charge whose caller is not among batch_callers would count nowhere, and a
    -- counter no charge reaches would be written for nothing: either fails the batch closed.
    IF array_position(charge_counter, NULL) IS NOT NULL OR cardinality(counter_demand) <> cardinality(counter_position) THEN
      RAISE EXCEPTION 'reserve_batch: % charges of % requests on % counters do not match', cardinality(charge_counter), n, cardinality(counter_position);
    END IF;
  END IF;
  FOR i IN 1 .. CASE WHEN charged_as_lists THEN 0 ELSE n END LOOP
    CONTINUE WHEN answers[i] IS NOT NULL;
    req_first_charge[i] := cardinality(charge_counter) + 1;
    FOR y IN endpoint_first_limit[req_endpoint_position[i]] .. endpoint_last_limit[req_endpoint_position[i]] LOOP
      x := coalesce(endpoint_limits[y], y);
      j := (x - 1) * scope_width + 1 + CASE limit_scope[x] WHEN 'g' THEN 0
                                            WHEN 'a' THEN coalesce(array_position(batch_callers, req_caller[i]), 0)
                                            ELSE coalesce(array_position(batch_destinations, req_destination_key[i]), 0) END;
      idx := counter_of[j];
      IF idx = 0 THEN
        -- A new counter: its key and the value that binds it, an account's override in force or
        -- plan value on a per-account limit (account_values), else the limit's own; a limit
        -- switched off (0) binds every account, whatever its own value. A per-account or
        -- cooldown charge without its scope's index (a request that should have been answered
        -- above) would count for the whole limit, so the batch fails closed instead.
        IF limit_scope[x] <> 'g' AND j = (x - 1) * scope_width + 1 THEN
          RAISE EXCEPTION 'reserve_batch: request % charges a per-account or cooldown limit without its scope', i;
        END IF;
        v_scope := CASE limit_scope[x] WHEN 'g' THEN '' WHEN 'a' THEN req_caller[i] ELSE req_destination_key[i] END;
        counter_position := counter_position || x;
        counter_limit_id := counter_limit_id || limit_ids[x];
        counter_scope := counter_scope || v_scope;
        -- Its limit's current window; a cooldown's (a first hit's) is each destination's own,
        -- found in phase 5.
        counter_start := counter_start || limit_start[x];
        counter_end := counter_end || limit_end[x];
        counter_measure := counter_measure || limit_measure[x];
        counter_limit := counter_limit || CASE WHEN limit_value[x] = 0 OR limit_scope[x] <> 'a' THEN limit_value[x]
                                               ELSE coalesce((account_values ->> (limit_ids[x] || '|' || v_scope))::bigint, limit_value[x]) END;
        counter_demand := counter_demand || 0::bigint;
        counter_charges := counter_charges || 0::bigint;
        idx := cardinality(counter_position);
        counter_of[j] := idx;
        IF limit_scope[x] = 'g' THEN
          global_counters := global_counters || idx;
        END IF;
      END IF;
      charge_counter := charge_counter || idx;
      charge_amount := charge_amount || CASE limit_measure[x] WHEN 'u' THEN req_amount[i] WHEN 'c' THEN 1::bigint ELSE req_money[i] END;
      counter_demand[idx] := counter_demand[idx] + charge_amount[cardinality(charge_amount)];
      counter_charges[idx] := counter_charges[idx] + 1;
    END LOOP;
    req_last_charge[i] := cardinality(charge_counter);
  END LOOP;
  -- Each limit's part of a grant's answer, made once: entry x describes position x, and every
  -- counter of that limit names it (a batch of 32 callers on a per-caller ceiling has 32 counters
  -- and one part). A cooldown's window is each destination's own: phase 5 gives each of its
  -- counters an entry of its own.
  FOR x IN 1 .. cardinality(batch_ceilings) LOOP
    c := batch_ceilings[x];
    answer_entries := answer_entries || jsonb_build_object('ceilingId', c.id, 'metric', c.metric, 'scope', c.scope,
      'window', c.window, 'windowEnd', CASE WHEN c.window <> 'first_hit' THEN ceiling_window_end[x] END);
  END LOOP;
  FOR x IN 1 .. cardinality(batch_budgets) LOOP
    bg := batch_budgets[x];
    answer_entries := answer_entries || jsonb_build_object('budgetId', bg.id, 'budget', bg.key, 'metric', 'money',
      'currency', bg.currency, 'scope', bg.scope, 'window', bg.window, 'windowEnd', budget_window_end[x]);
  END LOOP;
  counter_entry := counter_position;
  counter_used := array_fill(0::bigint, ARRAY[cardinality(counter_position)]);
  counter_added := counter_used;
  counter_grants := counter_used;

  -- Phase 5, cooldown windows (5): a cooldown starts at its first hit, so two first hits on one
  -- destination are serialised by an advisory lock and cannot both open a window. Only a cooldown
  -- has a first-hit window (a check of ceilings): a batch on endpoints without one runs no query here.
  IF cardinality(destination_endpoints) > 0 THEN
    FOR rec IN SELECT k.idx, (batch_ceilings[k.x]).id AS ceiling_id, (batch_ceilings[k.x]).window_seconds
               FROM unnest(counter_position, counter_scope) WITH ORDINALITY AS k(x, s, idx)
               WHERE limit_scope[k.x] = 'd' AND (batch_ceilings[k.x]).window = 'first_hit' ORDER BY 2, hashtext(k.s), k.s LOOP
      idx := rec.idx;
      PERFORM pg_advisory_xact_lock(rec.ceiling_id, hashtext(counter_scope[idx]));
      SELECT u.window_start, u.window_end INTO v_window_start, v_window_end FROM counters u
      WHERE u.limit_id = counter_limit_id[idx] AND u.scope_key = counter_scope[idx] AND u.window_end > t_now
      ORDER BY u.window_start DESC LIMIT 1;
      IF FOUND THEN
        counter_start[idx] := v_window_start;
        counter_end[idx] := v_window_end;
      ELSE
        counter_start[idx] := t_now;
        counter_end[idx] := t_now + make_interval(secs => rec.window_seconds);
      END IF;
      answer_entries := answer_entries || (answer_entries[counter_position[idx]] || jsonb_build_object('windowEnd', counter_end[idx]));
      counter_entry[idx] := cardinality(answer_entries);
    END LOOP;
  END IF;

  -- Phase 6, everything that does not depend on the counters' values, built before they are
  -- locked: each request's charges, which settle, release and expiry replay later.
  -- Every charge of the batch as the value its reservation keeps, in charge order, in one
  -- statement: a reservation keeps its own, from its first charge to its last
  -- (write_reservations), typed values that nothing prints or parses.
  -- With them, each charge's limit (its counter's), which a refusal and the compact answer name.
  SELECT coalesce(array_agg(ROW(counter_limit_id[ch.k], counter_scope[ch.k], counter_start[ch.k], counter_measure[ch.k], charge_amount[ch.x])::reservation_charge), '{}'),
         coalesce(array_agg(counter_limit[ch.k]), '{}')
  INTO batch_charges, charge_limit
  FROM unnest(charge_counter) WITH ORDINALITY AS ch(k, x);
  charge_used := array_fill(0::bigint, ARRAY[greatest(coalesce(array_length(charge_counter, 1), 0), 1)]);

  -- Phase 7, the counters read without a lock, and the missing ones made (6), in key order.
  -- An existing row is not inserted again: that insert would wait for a batch that has updated it
  -- to commit, and this batch could not get its work done while that one holds the counters.
  -- The reservations are written early only when every counter has room for the whole batch as
  -- read here: then a refusal below (another batch took the room meanwhile) is rare, and deletes
  -- its row. Each counter's demand (the sum of the batch's charges on it, their number, their
  -- limit), summed as phase 4 made the charges, is what has to fit.
  SELECT coalesce(array_agg(k.idx) FILTER (WHERE u.limit_id IS NULL), '{}'),
         coalesce(bool_and(counter_limit[k.idx] > 0 AND coalesce(u.held + u.settled, 0) + counter_demand[k.idx] <= counter_limit[k.idx]), true)
  INTO missing, write_early
  FROM unnest(counter_limit_id) WITH ORDINALITY AS k(l, idx)
  LEFT JOIN counters u ON u.limit_id = k.l AND u.scope_key = counter_scope[k.idx] AND u.window_start = counter_start[k.idx];
  IF cardinality(missing) > 0 THEN
    INSERT INTO counters (limit_id, scope_key, window_start, window_end)
    SELECT counter_limit_id[m], counter_scope[m], counter_start[m], counter_end[m] FROM unnest(missing) AS m
    ORDER BY counter_limit_id[m], counter_scope[m], counter_start[m]
    ON CONFLICT DO NOTHING;
  END IF;

  -- Phase 7a, the reservations written before the counters are locked (7), with the ids and
  -- expiries made in phase 2, and in compact form their grant answers. A repeat of an earlier
  -- request's key in this batch is not written: it follows that request.
  -- The requests to write (grant_request) are found in the same pass, with no statement.
  every_written := true;
  FOR i IN 1 .. n LOOP
    IF answers[i] IS NOT NULL THEN
      refused_early := refused_early OR answers[i]->>'status' = 'refused';
      CONTINUE;
    END IF;
    IF req_idempotency_key[i] IS NOT NULL THEN
      v_key := req_endpoint[i] || '|' || req_caller[i] || '|' || req_idempotency_key[i];
      IF first_with_key ? v_key THEN
        every_written := false;
        CONTINUE;
      END IF;
      first_with_key := first_with_key || jsonb_build_object(v_key, i);
    END IF;
    grant_request := grant_request || i;
  END LOOP;
  first_with_key := '{}';
  IF write_early THEN
    inserted := ceilings.write_reservations(grant_request, req_id, req_endpoint, req_caller, req_destination, req_destination_key, req_amount,
      req_parts, req_money, endpoint_prices, req_idempotency_key, batch_charges, req_first_charge, req_last_charge, t_now, req_expires);
    IF cardinality(inserted) = cardinality(grant_request) THEN
      -- Every one written (no key taken meanwhile): req_written is marked only if the decision's
      -- loop (phase 8) runs, which a batch that fits whole skips.
      written_early := grant_request;
    ELSE
      FOREACH i IN ARRAY grant_request LOOP
        req_written[i] := req_id[i] = ANY (inserted);
      END LOOP;
      -- A key a concurrent batch wrote a moment ago: answered from its reservation.
      FOREACH i IN ARRAY grant_request LOOP
        CONTINUE WHEN req_written[i];
        SELECT * INTO v_existing FROM reservations
        WHERE endpoint_id = req_endpoint[i] AND caller = req_caller[i] AND idempotency_key = req_idempotency_key[i];
        answers[i] := ceilings.replay_answer(v_existing, req_amount[i], req_destination_key[i], req_parts[i]);
        every_written := false;
      END LOOP;
    END IF;
    grant_request := '{}';
  ELSE
    grant_request := '{}';
    every_written := false;
  END IF;

  -- What the compact answer says that the counters' values cannot change, made into JSON before
  -- they are locked: the ids (only those made here: a caller that sent them has them, contract
  -- version 13), expiries (one for all when no request named a TTL, version 14), charges and
  -- their limits, the counters' descriptions. A NULL in a list is an empty entry, so every list
  -- keeps its positions.
  IF compact THEN
    batch_known := jsonb_build_object('reservationIds', CASE WHEN reservation_ids IS NULL THEN array_to_string(req_id, ',', '') END,
      'expiresAt', CASE WHEN ttl_seconds IS NULL THEN to_jsonb(t_now + default_ttl) ELSE to_jsonb(req_expires) END,
      'firstCharge', array_to_string(req_first_charge, ',', ''), 'lastCharge', array_to_string(req_last_charge, ',', ''),
      'chargeCounter', array_to_string(charge_counter, ',', ''), 'chargeLimit', array_to_string(charge_limit, ',', ''),
      'chargeAmount', array_to_string(charge_amount, ',', ''), 'counterEntry', array_to_string(counter_entry, ',', ''),
      'counters', to_jsonb(answer_entries));
  END IF;

  -- Phase 7b, lock the counters (7b) in key order. Every counter has its row by now (none is ever
  -- deleted while its limit lives); one not found would be charged nowhere, so the batch fails
  -- closed instead.
  -- The decision's fast path is known as they are locked: whether every counter has room for
  -- all of the batch's charges on it (phase 8), with no statement more while they are held.
  locked := 0;
  fits := compact AND every_written AND cardinality(charge_counter) > 0;
  -- One statement: the rows are locked in key order as the sorted subquery returns them, and each
  -- one's place (its ctid, which no one else can change while it is locked) is kept for the write
  -- in phase 10, which then finds each counter without its index.
  IF cardinality(counter_position) > 0 THEN
    SELECT array_agg(l.used ORDER BY l.idx), array_agg(l.t ORDER BY l.idx), fits AND bool_and(l.room), count(*)
    INTO counter_used, counter_tid, fits, locked
    FROM (SELECT k.idx, u.ctid AS t, u.held + u.settled AS used,
                 counter_limit[k.idx] > 0 AND u.held + u.settled + counter_demand[k.idx] <= counter_limit[k.idx] AS room
          FROM counters u
          JOIN unnest(counter_limit_id) WITH ORDINALITY AS k(l, idx)
            ON u.limit_id = k.l AND u.scope_key = counter_scope[k.idx] AND u.window_start = counter_start[k.idx]
          ORDER BY u.limit_id, u.scope_key, u.window_start
          FOR UPDATE OF u) l;
  END IF;
  IF locked <> cardinality(counter_position) THEN
    RAISE EXCEPTION 'reserve_batch: % of % counters found to lock', locked, cardinality(counter_position);
  END IF;

  -- Phase 8, decide in arrival order against the live values; all-or-nothing per request.
  -- When every counter has room for all of the batch's charges on it (known since 7b), arrival
  -- order cannot change a decision: every request is granted, each charge seeing the counter after
  -- the charges before it. Then nothing is computed here: the compact answer leaves each of those
  -- grants NULL and sends the counters as locked (counterUsed) and the charges' amounts, from
  -- which the library counts what each charge saw (compact answers, every reservation written
  -- early, no key repeated: the loop handles the rest).
  IF fits THEN
    counter_added := counter_demand;
    counter_grants := counter_charges;
  ELSE
    FOREACH i IN ARRAY written_early LOOP
      req_written[i] := true;
    END LOOP;
  END IF;
  FOR i IN 1 .. CASE WHEN fits THEN 0 ELSE n END LOOP
    CONTINUE WHEN answers[i] IS NOT NULL;
    v_key := CASE WHEN req_idempotency_key[i] IS NOT NULL THEN req_endpoint[i] || '|' || req_caller[i] || '|' || req_idempotency_key[i] END;
    IF v_key IS NOT NULL AND first_with_key ? v_key THEN
      -- The same key twice in one batch: the second is a replay of the first's answer.
      j := (first_with_key ->> v_key)::int;
      IF req_amount[j] = req_amount[i] AND req_destination_key[j] IS NOT DISTINCT FROM req_destination_key[i]
         AND req_parts[j] IS NOT DISTINCT FROM req_parts[i] THEN
        answers[i] := answers[j] || jsonb_build_object('replay', true);
      ELSE
        answers[i] := jsonb_build_object('status', 'error', 'code', 'idempotency_conflict',
          'message', 'this idempotency key was used with other parameters', 'reservationId', answers[j]->'reservationId');
      END IF;
      CONTINUE;
    END IF;

    v_failed := NULL;
    FOR x IN req_first_charge[i] .. req_last_charge[i] LOOP
      idx := charge_counter[x];
      -- A limit of 0 refuses even a free call: it is a kill (a budget's) or a blocked account.
      IF counter_used[idx] + counter_added[idx] + charge_amount[x] > charge_limit[x] OR charge_limit[x] = 0 THEN
        v_failed := x;
        EXIT;
      END IF;
    END LOOP;
    IF v_failed IS NOT NULL AND req_written[i] THEN
      unwritten := unwritten || req_id[i];
    END IF;

    -- A refusal carries retryAt (its window's end) only when the call would fit in the next
    -- window: a limit of 0 (a budget killed, an account's override or plan at 0) or a call costing
    -- more than the whole limit is refused again then, so it names no time to come back.
    -- The failed charge's limit is its counter's position: a ceiling's, or after them a budget's.
    x := counter_position[charge_counter[v_failed]];
    IF v_failed IS NOT NULL AND x > cardinality(batch_ceilings) THEN
      bg := batch_budgets[x - cardinality(batch_ceilings)];
      idx := charge_counter[v_failed];
      answers[i] := jsonb_build_object(
        'status', 'refused', 'gate', 'budget', 'budgetId', bg.id, 'budget', bg.key, 'currency', bg.currency,
        'limit', charge_limit[v_failed], 'used', counter_used[idx] + counter_added[idx],
        'remaining', greatest(charge_limit[v_failed] - counter_used[idx] - counter_added[idx], 0),
        'cost', charge_amount[v_failed],
        'message', CASE WHEN bg.value = 0 THEN format('budget %s is switched off', bg.key)
                        WHEN charge_limit[v_failed] = 0 THEN format('budget %s allows this account nothing: its override or its plan is 0', bg.key)
                        ELSE format('budget %s has %s micros of %s left; this call may cost %s', bg.key,
                                    greatest(charge_limit[v_failed] - counter_used[idx] - counter_added[idx], 0),
                                    charge_limit[v_failed], charge_amount[v_failed]) END)
        || CASE WHEN charge_limit[v_failed] > 0 AND charge_amount[v_failed] <= charge_limit[v_failed]
                THEN jsonb_build_object('retryAt', counter_end[idx]) ELSE '{}'::jsonb END;
      CONTINUE;
    END IF;
    IF v_failed IS NOT NULL THEN
      c := batch_ceilings[x];
      idx := charge_counter[v_failed];
      answers[i] := jsonb_build_object(
        'status', 'refused',
        'gate', CASE WHEN c.scope = 'destination' THEN 'cooldown' ELSE 'ceiling' END,
        'ceilingId', c.id, 'limit', charge_limit[v_failed],
        'used', counter_used[idx] + counter_added[idx],
        'remaining', greatest(charge_limit[v_failed] - counter_used[idx] - counter_added[idx], 0),
        'message', CASE WHEN charge_limit[v_failed] = 0 THEN format('ceiling %s allows this account nothing: its override or its plan is 0', c.id)
                        WHEN c.scope = 'destination' THEN 'this destination is cooling down'
                        ELSE format('ceiling %s has %s of %s left', c.id,
                                    greatest(charge_limit[v_failed] - counter_used[idx] - counter_added[idx], 0), charge_limit[v_failed]) END)
        || CASE WHEN charge_limit[v_failed] > 0 AND charge_amount[v_failed] <= charge_limit[v_failed]
                THEN jsonb_build_object('retryAt', counter_end[idx]) ELSE '{}'::jsonb END;
      CONTINUE;
    END IF;

    v_remaining := '[]';
    FOR x IN req_first_charge[i] .. req_last_charge[i] LOOP
      idx := charge_counter[x];
      counter_added[idx] := counter_added[idx] + charge_amount[x];
      counter_grants[idx] := counter_grants[idx] + 1;
      charge_used[x] := counter_used[idx] + counter_added[idx];
      IF NOT compact THEN
        v_remaining := v_remaining || (answer_entries[counter_entry[idx]] || jsonb_build_object('limit', charge_limit[x], 'used', charge_used[x],
          'remaining', charge_limit[x] - charge_used[x]));
      END IF;
    END LOOP;
    IF NOT req_written[i] THEN
      grant_request := grant_request || i;
    END IF;
    IF compact THEN
      answers[i] := jsonb_build_object('status', 'granted', 'replay', false, 'reservationId', req_id[i], 'expiresAt', req_expires[i],
        'charges', jsonb_build_array(req_first_charge[i], req_last_charge[i]));
    ELSE
      answers[i] := jsonb_build_object('status', 'granted', 'replay', false, 'reservationId', req_id[i], 'expiresAt', req_expires[i],
        'remaining', v_remaining);
    END IF;
    IF req_idempotency_key[i] IS NOT NULL THEN
      first_with_key := first_with_key || jsonb_build_object(v_key, i);
    END IF;
  END LOOP;

  -- Phase 9, the reservations not written early: a refused one's row is deleted, then the grants
  -- not yet written are (7d). A key taken a moment ago by a concurrent batch conflicts on the
  -- unique index: that grant is undone and answered from the stored reservation.
  IF cardinality(unwritten) > 0 THEN
    DELETE FROM reservations WHERE id = ANY (unwritten);
  END IF;
  IF cardinality(grant_request) > 0 THEN
    inserted := ceilings.write_reservations(grant_request, req_id, req_endpoint, req_caller, req_destination, req_destination_key, req_amount,
      req_parts, req_money, endpoint_prices, req_idempotency_key, batch_charges, req_first_charge, req_last_charge, t_now, req_expires);
    -- Nothing to undo when every grant was written (no key was taken meanwhile): skip the loop.
    FOR x IN 1 .. CASE WHEN cardinality(inserted) = cardinality(grant_request) THEN 0 ELSE cardinality(grant_request) END LOOP
      i := grant_request[x];
      CONTINUE WHEN req_id[i] = ANY (inserted);
      FOR j IN req_first_charge[i] .. req_last_charge[i] LOOP
        counter_added[charge_counter[j]] := counter_added[charge_counter[j]] - charge_amount[j];
        counter_grants[charge_counter[j]] := counter_grants[charge_counter[j]] - 1;
      END LOOP;
      SELECT * INTO v_existing FROM reservations
      WHERE endpoint_id = req_endpoint[i] AND caller = req_caller[i] AND idempotency_key = req_idempotency_key[i];
      answers[i] := ceilings.replay_answer(v_existing, req_amount[i], req_destination_key[i], req_parts[i]);
      -- Same-batch replays of the undone grant follow it.
      FOR j IN 1 .. n LOOP
        IF j <> i AND answers[j]->>'reservationId' = req_id[i]::text THEN
          answers[j] := answers[i] || jsonb_build_object('replay', true);
        END IF;
      END LOOP;
    END LOOP;
  END IF;

  -- Phase 10, one write per counter (locked, found by its place). A budget's charge may be 0 micros (a free
  -- part) and still count its reservation.
  -- By place even while counters is small enough that the planner would rather read all of it:
  -- a plan is kept for the session, and this one is made for the table at any size.
  PERFORM set_config('enable_seqscan', 'off', true);
  UPDATE counters u
  SET held = u.held + counter_added[d.k], reservations = u.reservations + counter_grants[d.k]
  FROM unnest(counter_tid) WITH ORDINALITY AS d(t, k)
  WHERE u.ctid = d.t AND counter_grants[d.k] <> 0;
  GET DIAGNOSTICS v_written = ROW_COUNT;
  PERFORM set_config('enable_seqscan', v_seqscan, true);
  -- Every counter a grant charged is written, or the batch fails closed: a place that found no row
  -- would be a grant charged nowhere.
  IF v_written <> cardinality(counter_grants) - cardinality(array_positions(counter_grants, 0::bigint)) THEN
    RAISE EXCEPTION 'reserve_batch: % of % counters written', v_written,
      cardinality(counter_grants) - cardinality(array_positions(counter_grants, 0::bigint));
  END IF;

  -- Phase 11, threshold alerts (8) on global ceilings, once per ceiling, window and percent. The
  -- counter row is locked, so exactly one batch sees each crossing. Only the global counters are
  -- visited (found before the lock): a batch of many callers has one counter each on a per-caller
  -- limit, and none of them has alerts.
  FOREACH idx IN ARRAY global_counters LOOP
    -- A threshold is a whole percent of the limit (a global limit's own value, counter_limit): none
    -- is crossed unless the counter passed a whole percent of it, so most batches read no limit's
    -- row and no threshold here, with the counters held.
    CONTINUE WHEN counter_added[idx] <= 0 OR counter_limit[idx] <= 0;
    CONTINUE WHEN (counter_used[idx] + counter_added[idx]) * 100 / counter_limit[idx] = counter_used[idx] * 100 / counter_limit[idx];
    x := counter_position[idx];
    IF x > cardinality(batch_ceilings) THEN
      -- A global budget's thresholds, the same way: "llm-daily reached 80% of its budget: $160.00 of $200.00 per UTC day".
      bg := batch_budgets[x - cardinality(batch_ceilings)];
      FOREACH v_pct IN ARRAY bg.alert_thresholds::int[] LOOP
        IF counter_used[idx] * 100 < v_pct::bigint * bg.value AND (counter_used[idx] + counter_added[idx]) * 100 >= v_pct::bigint * bg.value THEN
          PERFORM ceilings.fire_alert('budget_threshold',
            format('budget-threshold:%s:%s:%s', bg.id, extract(epoch FROM counter_start[idx])::bigint, v_pct),
            NULL, NULL, counter_start[idx],
            format('budget %s reached %s%% of its value: %s of %s per %s', bg.key, v_pct,
                   ceilings.format_money(counter_used[idx] + counter_added[idx], bg.currency),
                   ceilings.format_money(bg.value, bg.currency),
                   CASE bg.window WHEN 'utc_day' THEN 'UTC day' ELSE 'billing month' END),
            jsonb_build_object('budgetId', bg.id, 'budget', bg.key, 'percent', v_pct, 'used', counter_used[idx] + counter_added[idx],
                               'limit', bg.value, 'windowEnd', counter_end[idx]),
            bg.id);
        END IF;
      END LOOP;
      CONTINUE;
    END IF;
    c := batch_ceilings[x];
    FOREACH v_pct IN ARRAY c.alert_thresholds::int[] LOOP
      IF counter_used[idx] * 100 < v_pct::bigint * c.value AND (counter_used[idx] + counter_added[idx]) * 100 >= v_pct::bigint * c.value THEN
        SELECT * INTO ep FROM unnest(batch_endpoints) s WHERE s.id = c.endpoint_id;
        -- Worded like the dashboard: "email.subscribe reached 80% of its ceiling: 80 of 100 emails per UTC day".
        PERFORM ceilings.fire_alert('threshold',
          format('threshold:%s:%s:%s', c.id, extract(epoch FROM counter_start[idx])::bigint, v_pct),
          c.endpoint_id, c.id, counter_start[idx],
          format('%s reached %s%% of its ceiling: %s of %s %s per %s', ep.key, v_pct,
                 to_char(counter_used[idx] + counter_added[idx], 'FM999,999,999,999,999,990'),
                 to_char(c.value, 'FM999,999,999,999,999,990'),
                 CASE c.metric WHEN 'calls' THEN 'calls' ELSE ep.unit END,
                 CASE c.window WHEN 'utc_day' THEN 'UTC day' ELSE 'billing month' END),
          jsonb_build_object('percent', v_pct, 'used', counter_used[idx] + counter_added[idx], 'limit', c.value,
                             'windowEnd', counter_end[idx]));
      END IF;
    END LOOP;
  END LOOP;

  -- Phase 12, log every refusal (9), folded: the list in one statement (appending to a JSON array
  -- copied it whole for each refusal). A grant of the fast path has no answer here (NULL). Most
  -- batches refuse nothing: a batch that fits whole refuses only what it refused before the lock
  -- (refused_early), and otherwise a pass over the answers, not a statement, finds its first.
  FOR i IN 1 .. CASE WHEN fits AND NOT refused_early THEN 0 ELSE n END LOOP
    CONTINUE WHEN answers[i] IS NULL OR answers[i]->>'status' <> 'refused';
    SELECT jsonb_agg(jsonb_build_object('endpointId', req_endpoint[t.o], 'endpointKey', req_endpoint_key[t.o],
             'ceilingId', answers[t.o]->'ceilingId', 'budgetId', answers[t.o]->'budgetId', 'gate', answers[t.o]->>'gate',
             'caller', req_caller[t.o], 'destination', coalesce(req_destination_key[t.o], ''), 'amount', req_amount[t.o],
             'remaining', answers[t.o]->'remaining', 'requestId', request_ids[t.o], 'detail', answers[t.o]->>'message') ORDER BY t.o)
    INTO refused
    FROM generate_series(i, n) AS t(o)
    WHERE answers[t.o]->>'status' = 'refused';
    PERFORM ceilings.log_refusals(refused);
    EXIT;
  END LOOP;

  IF compact THEN
    RETURN batch_known || jsonb_build_object('answers', to_jsonb(answers), 'counterUsed', array_to_string(counter_used, ',', ''),
      'chargeUsed', CASE WHEN fits THEN NULL ELSE array_to_string(charge_used, ',', '') END);
  END IF;
  RETURN to_jsonb(answers);
END $$;
