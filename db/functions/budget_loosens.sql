-- Guarantees: whether a budget shaped `after` lets more money through than one shaped `before`,
-- judged by the worst case in money each allows (whole micros of the budgets' one currency), so
-- "looser" is decided here and nowhere else (lib/budgets/re-add.ts asks it of a budget created
-- within 24 hours of archiving one over the same members). Looser when any of these rises:
--   - the money a UTC day may take: a utc_day budget's value; a billing_month budget's value too
--     (the whole month may go in one day);
--   - the money a billing month may take: a utc_day budget's value times 31; a billing_month one's value;
--   - the same two for the max (the most its value may be set to, and plan values and overrides
--     within it);
--   - the scope: per account (each account gets the value, with no total) after global.
-- A per-account budget after global is looser at any value; global after per-account is compared by
-- value (a global budget holds every account to its value, and all of them together too).
-- The value a budget stands for is its value in force, or at 0 what a restore puts back (the value
-- from before the kill, else its default). On the `after` side the default counts too, as for a new
-- ceiling: a restore of it at 0 would put its default back.
-- Locks: none (pure).
CREATE OR REPLACE FUNCTION ceilings.budget_loosens(
  before_scope text, before_window text, before_value bigint, before_value_before_kill bigint, before_default bigint, before_max bigint,
  after_scope text, after_window text, after_value bigint, after_value_before_kill bigint, after_default bigint, after_max bigint
) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  WITH s AS (
    SELECT
      CASE WHEN before_value > 0 THEN before_value ELSE coalesce(before_value_before_kill, before_default) END::numeric AS b_standing,
      greatest(CASE WHEN after_value > 0 THEN after_value ELSE coalesce(after_value_before_kill, after_default) END, after_default)::numeric AS a_standing,
      CASE WHEN before_window = 'utc_day' THEN 31 ELSE 1 END AS b_days,
      CASE WHEN after_window = 'utc_day' THEN 31 ELSE 1 END AS a_days
  )
  SELECT (after_scope = 'account' AND before_scope = 'global')
      OR a_standing > b_standing
      OR a_standing * a_days > b_standing * b_days
      OR after_max::numeric > before_max::numeric
      OR after_max::numeric * a_days > before_max::numeric * b_days
  FROM s
$$;
