-- What binds one account on one per-caller ceiling ('ceiling') or per-account budget ('budget')
-- from its plan, before its override, a block and a kill: the plan's value (the account's plan, or
-- the default plan when it was never assigned one), else the limit's own standing value (the one
-- in force, or the one a restore puts back while killed: the value before the kill, else the
-- default). Change control compares a per-account override with it: an override above what binds
-- the account (its override in force, else this) is a raise, and so is removing an override below
-- this. The same fallback as ceilings.plan_loosening. NULL: no such per-caller limit.
-- Locks: none (read under the caller's locks: the ceiling or budget row).
CREATE OR REPLACE FUNCTION ceilings.plan_limit(p_kind text, p_limit int, p_account text) RETURNS bigint
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  -- The per-caller ceiling or per-account budget named: one row of the same columns either way.
  WITH own AS (
    SELECT c.limit_id, c.value, c.value_before_kill, c.default_value FROM ceilings c
     WHERE p_kind = 'ceiling' AND c.id = p_limit AND c.scope = 'caller'
    UNION ALL
    SELECT b.limit_id, b.value, b.value_before_kill, b.default_value FROM budgets b
     WHERE p_kind = 'budget' AND b.id = p_limit AND b.scope = 'account'
  )
  SELECT coalesce(pv.value, CASE WHEN o.value > 0 THEN o.value ELSE coalesce(o.value_before_kill, o.default_value) END)
    FROM own o
    LEFT JOIN accounts a ON a.account = p_account
    LEFT JOIN plan_limit_values pv ON pv.limit_id = o.limit_id AND pv.plan_id = coalesce(a.plan_id, (SELECT d.id FROM plans d WHERE d.is_default))
$$;
