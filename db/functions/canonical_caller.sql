-- Guarantees: one billing account is one string everywhere. The caller is trimmed of every Unicode
-- whitespace character at both ends (the same set as JavaScript's \s plus U+0085), so an override,
-- a counter and a refusal always name the same account; an empty result is no caller (NULL).
-- Control characters left inside are refused by request_error, not removed here.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.canonical_caller(raw text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  -- btrim with the set, not a regular expression: the same two ends removed, and this runs
  -- several times for every request of every batch (a regexp_replace was 2-3% of a batch's CPU).
  -- U+2000 to U+200A are written out: btrim takes characters, not ranges.
  SELECT nullif(btrim(raw, E'\t\n\u000b\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff'), '')
$$;
