-- Records a threshold crossing once per ceiling (or budget), window and percent, and queues its deliveries in
-- the same transaction (the outbox), so a crash between firing and sending loses nothing.
-- Lock order: the alerts row (its dedupe key), then the new alert_deliveries rows.
CREATE OR REPLACE FUNCTION ceilings.fire_alert(
  p_kind text, p_dedupe text, p_endpoint int, p_ceiling int, p_window timestamptz, p_message text, p_details jsonb,
  p_budget int DEFAULT NULL
) RETURNS boolean
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
DECLARE
  new_id int;
BEGIN
  INSERT INTO alerts (kind, dedupe_key, endpoint_id, ceiling_id, budget_id, window_start, message, details)
  VALUES (p_kind, p_dedupe, p_endpoint, p_ceiling, p_budget, p_window, p_message, p_details)
  ON CONFLICT (dedupe_key) DO NOTHING
  RETURNING id INTO new_id;
  IF new_id IS NULL THEN
    RETURN false;
  END IF;
  INSERT INTO alert_deliveries (alert_id, destination_id)
  SELECT new_id, d.id FROM alert_destinations d WHERE d.enabled ORDER BY d.id;
  RETURN true;
END $$;
