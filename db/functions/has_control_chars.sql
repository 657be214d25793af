-- Guarantees: true when the text holds a C0 or C1 control character (U+0001-U+001F, U+007F-U+009F).
-- Such text never reaches a table: a caller, destination or key with one is an input error for
-- that request alone (NUL cannot reach SQL at all: Postgres text and jsonb refuse it).
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.has_control_chars(raw text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(raw ~ '[\u0001-\u001f\u007f-\u009f]', false)
$$;
