-- Fallback canonical key for SQL callers that pass only the raw destination. The TypeScript
-- library canonicalises fully (plus-tags, provider dots, phone numbers) and passes destinationKey.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.canonical_destination(raw text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT nullif(lower(btrim(raw)), '')
$$;
