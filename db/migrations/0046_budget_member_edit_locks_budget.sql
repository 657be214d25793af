-- A change to a budget's members takes the budget's row too (FOR NO KEY UPDATE, as an update of the
-- budget does), before the endpoints' locks. An update of the budget (its value, a kill, an archive)
-- forgets the kept configuration of the members it can see (0038's budgets_lock_members); a member
-- added by a transaction not yet committed is not one of them, and its endpoint's batches, reading
-- the budget as it was once that insert committed, could keep the old value past the update. With
-- the row taken, the insert and the update of one budget run one after the other, and whichever
-- comes second sees the other's commit.
CREATE FUNCTION lock_budget_member_for_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM budgets b
  WHERE b.id IN (CASE WHEN TG_OP <> 'INSERT' THEN OLD.budget_id END, CASE WHEN TG_OP <> 'DELETE' THEN NEW.budget_id END)
  ORDER BY b.id FOR NO KEY UPDATE OF b;
  PERFORM ceilings.lock_endpoints_for_change(ARRAY[
    CASE WHEN TG_OP <> 'INSERT' THEN OLD.endpoint_id END,
    CASE WHEN TG_OP <> 'DELETE' THEN NEW.endpoint_id END]);
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
--> statement-breakpoint
DROP TRIGGER budget_members_lock_endpoint ON budget_members;
--> statement-breakpoint
CREATE TRIGGER budget_members_lock_endpoint
  BEFORE INSERT OR UPDATE OR DELETE ON budget_members
  FOR EACH ROW EXECUTE FUNCTION lock_budget_member_for_edit();
