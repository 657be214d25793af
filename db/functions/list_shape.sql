-- Guarantees: the shape of an array as array_dims writes it ('[1:3]', '[0:1]', '[1:2][1:1]'), ''
-- for an empty one, NULL for NULL. decide_batch reads request i as the i-th element of
-- each of its arrays, so each must have the shape '[1:n]' (or be NULL).
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.list_shape(a anyarray) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_dims(a), CASE WHEN cardinality(a) = 0 THEN '' END)
$$;
