-- Guarantees: an endpoint's parts as {name: picos a unit}, the form a reservation keeps its prices in.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.part_prices(endpoint_parts jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(jsonb_object_agg(p->>'name', (p->>'pricePico')::bigint), '{}') FROM jsonb_array_elements(endpoint_parts) p
$$;
