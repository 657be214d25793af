-- What binds one billing account on one per-account budget, by the budget's id, in micros: limit_binding.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.account_budget_limit(p_budget int, p_caller text, OUT value bigint, OUT source text, OUT ends_at timestamptz)
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  SELECT l.value, l.source, l.ends_at FROM budgets b CROSS JOIN LATERAL ceilings.limit_binding(b.limit_id, p_caller) l WHERE b.id = p_budget
$$;
