-- Guarantees: one billing account is one string everywhere. The caller is trimmed of every Unicode
-- whitespace character at both ends (the same set as JavaScript's \s plus U+0085), so an override,
-- a counter and a refusal always name the same account; an empty result is no caller (NULL).
-- Control characters left inside are refused by request_error, not removed here.
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.canonical_caller(raw text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT nullif(regexp_replace(raw,
    '^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$',
    '', 'g'), '')
$$;
