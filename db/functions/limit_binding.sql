-- What binds one billing account on one per-account limit (a per-caller ceiling or a per-account
-- budget, by its limit id), in the limit's measure, why, and until when: the rule reserve_batch
-- applies inline, written once for both kinds, for readers (the status API, the account page and
-- API, digests). source: blocked (the account is), kill (the budget, or any ceiling of the ceiling's
-- endpoint, is switched off: every call is refused), override (the account's own, in force: ends_at
-- is its end, null when it lasts), plan (the account's, or the default plan when it was never
-- assigned one), ceiling or budget (the limit's own value).
-- A block is named before a kill, as reserve_batch refuses a blocked account before any other gate.
-- No row for a limit that is not per account.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.limit_binding(p_limit int, p_caller text, OUT value bigint, OUT source text, OUT ends_at timestamptz)
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  SELECT CASE WHEN x.killed OR a.blocked_at IS NOT NULL THEN 0 ELSE coalesce(o.value, pv.value, x.value) END,
         CASE WHEN a.blocked_at IS NOT NULL THEN 'blocked' WHEN x.killed THEN 'kill' WHEN o.value IS NOT NULL THEN 'override'
              WHEN pv.value IS NOT NULL THEN 'plan' ELSE x.kind END,
         CASE WHEN a.blocked_at IS NULL AND NOT x.killed THEN o.expires_at END
  FROM (SELECT 'ceiling' AS kind, c.value, EXISTS (SELECT 1 FROM ceilings z WHERE z.endpoint_id = c.endpoint_id AND z.value = 0) AS killed
        FROM ceilings c WHERE c.limit_id = p_limit AND c.scope = 'caller'
        UNION ALL
        SELECT 'budget', b.value, b.value = 0 FROM budgets b WHERE b.limit_id = p_limit AND b.scope = 'account') x
  LEFT JOIN accounts a ON a.account = p_caller
  LEFT JOIN limit_overrides o ON o.limit_id = p_limit AND o.caller = p_caller AND (o.expires_at IS NULL OR o.expires_at > now())
  LEFT JOIN plan_limit_values pv ON pv.limit_id = p_limit
    AND pv.plan_id = coalesce(a.plan_id, (SELECT d.id FROM plans d WHERE d.is_default))
$$;
