-- What binds one billing account on one per-account budget, in micros, and why: the rule
-- reserve_batch applies inline, for readers. source: kill (the budget is switched off), blocked,
-- override, plan, budget (its own value).
-- A block is named before a kill, as reserve_batch refuses a blocked account before any other gate.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.account_budget_limit(p_budget int, p_caller text, OUT value bigint, OUT source text)
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  SELECT CASE WHEN b.value = 0 OR a.blocked_at IS NOT NULL THEN 0 ELSE coalesce(o.value, pv.value, b.value) END,
         CASE WHEN a.blocked_at IS NOT NULL THEN 'blocked' WHEN b.value = 0 THEN 'kill' WHEN o.value IS NOT NULL THEN 'override'
              WHEN pv.value IS NOT NULL THEN 'plan' ELSE 'budget' END
  FROM budgets b
  LEFT JOIN accounts a ON a.account = p_caller
  LEFT JOIN limit_overrides o ON o.limit_id = b.limit_id AND o.caller = p_caller AND (o.expires_at IS NULL OR o.expires_at > now())
  LEFT JOIN plan_limit_values pv ON pv.limit_id = b.limit_id
    AND pv.plan_id = coalesce(a.plan_id, (SELECT d.id FROM plans d WHERE d.is_default))
  WHERE b.id = p_budget AND b.scope = 'account'
$$;
