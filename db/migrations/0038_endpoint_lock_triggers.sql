-- Every change to a ceiling, a budget or a budget's members takes the endpoint locks exclusively,
-- whatever makes it: the dashboard, the CLI and the worker already did (ceilings.lock_endpoints_for_change),
-- and now an UPDATE typed in psql does too. reserve_batch takes those locks shared and reads these
-- rows after it has them, so it no longer locks the rows themselves: with two batches of one
-- endpoint in flight, each batch's FOR SHARE of the same ceilings rows made a multixact.
CREATE FUNCTION lock_endpoint_for_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ceilings.lock_endpoints_for_change(ARRAY[
    CASE WHEN TG_OP <> 'INSERT' THEN OLD.endpoint_id END,
    CASE WHEN TG_OP <> 'DELETE' THEN NEW.endpoint_id END]);
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
--> statement-breakpoint
CREATE TRIGGER ceilings_lock_endpoint
  BEFORE INSERT OR UPDATE OR DELETE ON ceilings
  FOR EACH ROW EXECUTE FUNCTION lock_endpoint_for_edit();
--> statement-breakpoint
CREATE TRIGGER budget_members_lock_endpoint
  BEFORE INSERT OR UPDATE OR DELETE ON budget_members
  FOR EACH ROW EXECUTE FUNCTION lock_endpoint_for_edit();
--> statement-breakpoint
CREATE FUNCTION lock_budget_members_for_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ceilings.lock_endpoints_for_change(ARRAY(SELECT m.endpoint_id FROM budget_members m WHERE m.budget_id = OLD.id));
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
--> statement-breakpoint
CREATE TRIGGER budgets_lock_members
  BEFORE UPDATE OR DELETE ON budgets
  FOR EACH ROW EXECUTE FUNCTION lock_budget_members_for_edit();
