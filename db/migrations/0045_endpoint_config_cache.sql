CREATE TABLE "endpoint_config_cache" (
	"id" integer PRIMARY KEY NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_until" timestamp with time zone NOT NULL,
	"per_call_max" bigint NOT NULL,
	"unit_price" numeric NOT NULL,
	"prices" jsonb NOT NULL,
	"limit_ids" integer[] NOT NULL,
	"limit_scope" text[] NOT NULL,
	"limit_measure" text[] NOT NULL,
	"limit_value" bigint[] NOT NULL,
	"limit_start" timestamp with time zone[] NOT NULL,
	"limit_end" timestamp with time zone[] NOT NULL,
	"limit_thresholds" jsonb NOT NULL,
	"entries" jsonb NOT NULL
);
--> statement-breakpoint
-- What reserve_batch_arrays reads of an endpoint, kept between batches (db/functions/endpoint_config.sql).
-- A row is forgotten by every change that takes the endpoint's lock (ceilings.lock_endpoints_for_change:
-- the triggers of 0038 on ceilings, budgets and budget_members, the app's own calls) and by the two below.
-- A change to the endpoint's own row takes its lock too, whatever makes it (an archive, a price, a
-- per-call max typed in psql binds the next batch), as do an insert (an id used again after a table
-- was emptied starts with nothing kept) and a delete.
CREATE FUNCTION lock_endpoint_row_for_edit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ceilings.lock_endpoints_for_change(ARRAY[
    CASE WHEN TG_OP <> 'INSERT' THEN OLD.id END,
    CASE WHEN TG_OP <> 'DELETE' THEN NEW.id END]);
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
--> statement-breakpoint
CREATE TRIGGER endpoints_lock_for_edit
  BEFORE INSERT OR UPDATE OR DELETE ON endpoints
  FOR EACH ROW EXECUTE FUNCTION lock_endpoint_row_for_edit();
--> statement-breakpoint
-- TRUNCATE fires no row trigger: emptying a table an endpoint's configuration is read from forgets
-- every endpoint's. As the table's owner: the app role may read the kept rows, not delete them.
CREATE FUNCTION forget_endpoint_configs() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  DELETE FROM endpoint_config_cache;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER endpoints_forget_configs AFTER TRUNCATE ON endpoints FOR EACH STATEMENT EXECUTE FUNCTION forget_endpoint_configs();
--> statement-breakpoint
CREATE TRIGGER ceilings_forget_configs AFTER TRUNCATE ON ceilings FOR EACH STATEMENT EXECUTE FUNCTION forget_endpoint_configs();
--> statement-breakpoint
CREATE TRIGGER budgets_forget_configs AFTER TRUNCATE ON budgets FOR EACH STATEMENT EXECUTE FUNCTION forget_endpoint_configs();
--> statement-breakpoint
CREATE TRIGGER budget_members_forget_configs AFTER TRUNCATE ON budget_members FOR EACH STATEMENT EXECUTE FUNCTION forget_endpoint_configs();
