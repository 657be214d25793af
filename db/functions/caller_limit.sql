-- What binds one billing account on one per-caller ceiling, by the ceiling's id: limit_binding.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.caller_limit(p_ceiling int, p_caller text, OUT value bigint, OUT source text, OUT ends_at timestamptz)
LANGUAGE sql STABLE SET search_path = public, pg_temp AS $$
  SELECT l.value, l.source, l.ends_at FROM ceilings c CROSS JOIN LATERAL ceilings.limit_binding(c.limit_id, p_caller) l WHERE c.id = p_ceiling
$$;
