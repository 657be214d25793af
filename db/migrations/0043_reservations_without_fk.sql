-- A reservation names its endpoint without a foreign key. The key's check ran for every reservation
-- written and took a KEY SHARE lock on the endpoint's row: with two batches of one endpoint in
-- flight, each lock made or grew a multixact on that row (about a third of a batch's insert time,
-- measured with npm run bench:enforcement). What the key gave is kept by other means:
--   * a reservation's endpoint exists: reservations are written by reserve_batch alone
--     (ceilings.write_reservations), for endpoints it read while holding their locks shared;
--   * an endpoint with reservations is never deleted: endpoints are archived, and the trigger
--     below refuses the delete as the key did (foreign_key_violation), after taking the endpoint's
--     lock exclusively, so a batch writing reservations of it commits before the check reads them.
ALTER TABLE "reservations" DROP CONSTRAINT "reservations_endpoint_id_endpoints_id_fk";--> statement-breakpoint
CREATE FUNCTION keep_reserved_endpoint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ceilings.lock_endpoints_for_change(ARRAY[OLD.id]);
  IF EXISTS (SELECT 1 FROM reservations r WHERE r.endpoint_id = OLD.id) THEN
    RAISE EXCEPTION 'endpoint % has reservations: archive it instead of deleting it', OLD.key
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN OLD;
END $$;
--> statement-breakpoint
CREATE TRIGGER endpoints_keep_reserved
  BEFORE DELETE ON endpoints
  FOR EACH ROW EXECUTE FUNCTION keep_reserved_endpoint();
