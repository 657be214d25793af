-- What binds one billing account on one per-caller ceiling, and why: the rule reserve_batch applies
-- inline, for readers (the status API, the account page, digests). source: blocked (the account
-- is), kill (the ceiling, or another ceiling of its endpoint, is switched off: the endpoint refuses
-- every call), override, plan (the account's, or the default plan when it was never assigned one),
-- ceiling (its own value).
-- A block is named before a kill, as reserve_batch refuses a blocked account before any other gate.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.caller_limit(p_ceiling int, p_caller text, OUT value bigint, OUT source text)
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  SELECT CASE WHEN k.killed OR a.blocked_at IS NOT NULL THEN 0 ELSE coalesce(o.value, pv.value, c.value) END,
         CASE WHEN a.blocked_at IS NOT NULL THEN 'blocked' WHEN k.killed THEN 'kill' WHEN o.value IS NOT NULL THEN 'override'
              WHEN pv.value IS NOT NULL THEN 'plan' ELSE 'ceiling' END
  FROM ceilings c
  CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM ceilings z WHERE z.endpoint_id = c.endpoint_id AND z.value = 0) AS killed) k
  LEFT JOIN accounts a ON a.account = p_caller
  LEFT JOIN limit_overrides o ON o.limit_id = c.limit_id AND o.caller = p_caller AND (o.expires_at IS NULL OR o.expires_at > now())
  LEFT JOIN plan_limit_values pv ON pv.limit_id = c.limit_id
    AND pv.plan_id = coalesce(a.plan_id, (SELECT d.id FROM plans d WHERE d.is_default))
  WHERE c.id = p_ceiling AND c.scope = 'caller'
$$;
