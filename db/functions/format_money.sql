-- Guarantees: micros written as money for alert messages, the way the dashboard writes them:
-- "$1,234.50" in USD, "EUR 1,234.50" otherwise; a fraction of a cent keeps its digits ("$0.0025").
-- Locks: none.
CREATE OR REPLACE FUNCTION ceilings.format_money(micros bigint, currency text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN currency = 'USD' THEN '$' ELSE currency || ' ' END
      || CASE WHEN micros % 10000 = 0 THEN to_char(micros / 1000000.0, 'FM999,999,999,999,990.00')
              ELSE rtrim(to_char(micros / 1000000.0, 'FM999,999,999,999,990.000000'), '0') END
$$;
