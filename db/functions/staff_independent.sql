-- Guarantees: the one independence rule of change control. Staff a and b are independent when
-- both are given, they are two people, and neither controls the other through any chain of
-- staff_grants (created, promoted, or set the password of; directly or through others), in either
-- direction. Two members made by the same third admin (siblings) ARE independent by this rule.
-- The trigger change_requests_independent and lib/changes/who.ts both call this function.
-- Locks: none; reads staff_grants as of the statement.
CREATE OR REPLACE FUNCTION ceilings.staff_independent(a int, b int) RETURNS boolean
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  SELECT a IS NOT NULL AND b IS NOT NULL AND a <> b
     AND ceilings.staff_control_path(a, b) IS NULL
     AND ceilings.staff_control_path(b, a) IS NULL
$$;
