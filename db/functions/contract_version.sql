-- Guarantees: the version of the SQL contract (the signatures and answers of these functions).
-- The TypeScript library checks it before its first reservation and refuses every reservation as
-- unavailable on another version, naming `npm run db:migrate`. Raise it with any change a caller
-- can see, and in lib/enforcement/contract.ts in the same commit.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.contract_version() RETURNS int
LANGUAGE sql IMMUTABLE AS $$
  SELECT 14
$$;
