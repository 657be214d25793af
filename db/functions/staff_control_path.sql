-- Guarantees: the chain of grants (staff_grants: created, promoted, password set) by which staff
-- p_top controls staff p_bottom, directly or through others, as a JSON array of steps from the top
-- down ([{"by": id, "kind": "create", "of": id}, ...]); '[]' when they are the same person; NULL
-- when there is no such chain. A breadth-first walk that visits each staff member once, so it ends
-- on any graph (a cycle of grants included) and finds a shortest chain.
-- Locks: none; reads staff_grants as of the statement.
CREATE OR REPLACE FUNCTION ceilings.staff_control_path(p_top int, p_bottom int) RETURNS jsonb
LANGUAGE plpgsql STABLE SET search_path = public, pg_temp AS $$
DECLARE
  seen int[] := ARRAY[p_top];
  frontier int[] := ARRAY[p_top];
  reached int[];
  via jsonb := '{}'::jsonb;
  r record;
  chain jsonb := '[]'::jsonb;
  cur int;
BEGIN
  IF p_top IS NULL OR p_bottom IS NULL THEN
    RETURN NULL;
  END IF;
  IF p_top = p_bottom THEN
    RETURN chain;
  END IF;
  WHILE cardinality(frontier) > 0 AND NOT p_bottom = ANY(seen) LOOP
    reached := ARRAY[]::int[];
    -- One grant per newly reached member (the oldest), so the chain names how control began.
    FOR r IN
      SELECT DISTINCT ON (g.staff_id) g.staff_id, g.granted_by_id, g.kind
      FROM staff_grants g
      WHERE g.granted_by_id = ANY(frontier) AND NOT g.staff_id = ANY(seen)
      ORDER BY g.staff_id, g.id
    LOOP
      seen := seen || r.staff_id;
      reached := reached || r.staff_id;
      via := via || jsonb_build_object(r.staff_id::text, jsonb_build_object('by', r.granted_by_id, 'kind', r.kind));
    END LOOP;
    frontier := reached;
  END LOOP;
  IF NOT p_bottom = ANY(seen) THEN
    RETURN NULL;
  END IF;
  cur := p_bottom;
  WHILE cur <> p_top LOOP
    chain := jsonb_build_array(jsonb_build_object('by', (via -> cur::text ->> 'by')::int, 'kind', via -> cur::text ->> 'kind', 'of', cur)) || chain;
    cur := (via -> cur::text ->> 'by')::int;
  END LOOP;
  RETURN chain;
END $$;
