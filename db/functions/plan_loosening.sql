-- Which limits a move from one plan to another loosens: each per-caller ceiling and per-account
-- budget whose binding value goes up. Change control calls it for every plan move (an account's
-- plan assigned, one or in bulk; the default plan switched): a move it returns rows for is a raise,
-- asked of a second admin (or, by an API key, allowed only to a plan marked key_assignable); a move
-- it returns nothing for is one person's, as lowering is. The TypeScript never re-derives it.
--
-- Guarantees: the binding value on each side is the one reserve_batch applies, before a block and
-- a kill (both are stops with their own rules, and neither is what the plan decides): for an
-- account (p_account given) its override first, then the plan's value, then the limit's own
-- standing value (the one in force, or the one a restore puts back while killed: the value before
-- the kill, else the default). Without p_account (the default switch) overrides are not read. NULL
-- for a plan means the default plan. The two sides are compared as the worst case one account can
-- spend in one window, in the limit's measure: units for a ceiling (a ceiling of calls times the
-- endpoint's per-call max, in numeric: no overflow), micros for a budget. A row is returned only when after > before.
-- Locks: none (read under the caller's locks: the plan rows, the account rows).
CREATE OR REPLACE FUNCTION ceilings.plan_loosening(p_from int, p_to int, p_account text DEFAULT NULL)
RETURNS TABLE (limit_kind text, limit_id int, measure text, before_value bigint, after_value bigint, worst_before numeric, worst_after numeric)
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  WITH sides AS (
    SELECT coalesce(p_from, (SELECT d.id FROM plans d WHERE d.is_default)) AS from_id,
           coalesce(p_to, (SELECT d.id FROM plans d WHERE d.is_default)) AS to_id
  ), limits AS (
    SELECT 'ceiling'::text AS kind, c.id,
           CASE WHEN c.metric = 'units' THEN 'units' ELSE 'calls' END AS measure,
           CASE WHEN c.metric = 'units' THEN 1::bigint ELSE e.per_call_max END AS factor,
           CASE WHEN c.value > 0 THEN c.value ELSE coalesce(c.value_before_kill, c.default_value) END AS own,
           (SELECT o.value FROM limit_overrides o WHERE o.limit_id = c.limit_id AND o.caller = p_account AND (o.expires_at IS NULL OR o.expires_at > now())) AS override,
           (SELECT v.value FROM plan_limit_values v, sides s WHERE v.limit_id = c.limit_id AND v.plan_id = s.from_id) AS from_value,
           (SELECT v.value FROM plan_limit_values v, sides s WHERE v.limit_id = c.limit_id AND v.plan_id = s.to_id) AS to_value
      FROM ceilings c JOIN endpoints e ON e.id = c.endpoint_id
     WHERE c.scope = 'caller'
    UNION ALL
    SELECT 'budget', b.id, 'micros', 1::bigint,
           CASE WHEN b.value > 0 THEN b.value ELSE coalesce(b.value_before_kill, b.default_value) END,
           (SELECT o.value FROM limit_overrides o WHERE o.limit_id = b.limit_id AND o.caller = p_account AND (o.expires_at IS NULL OR o.expires_at > now())),
           (SELECT v.value FROM plan_limit_values v, sides s WHERE v.limit_id = b.limit_id AND v.plan_id = s.from_id),
           (SELECT v.value FROM plan_limit_values v, sides s WHERE v.limit_id = b.limit_id AND v.plan_id = s.to_id)
      FROM budgets b
     WHERE b.scope = 'account'
  ), bound AS (
    SELECT kind, id, measure, factor,
           coalesce(override, from_value, own) AS before_value,
           coalesce(override, to_value, own) AS after_value
      FROM limits
  )
  SELECT kind, id, CASE WHEN measure = 'micros' THEN 'micros' ELSE 'units' END,
         before_value, after_value, before_value::numeric * factor, after_value::numeric * factor
    FROM bound
   WHERE after_value::numeric * factor > before_value::numeric * factor
   ORDER BY kind, id
$$;
