-- Every change of an API key that authentication reads (created, revoked, deleted, or any column
-- but last_used_at, which every process touches once a minute) notifies ceilings_api_keys at
-- commit, so a process that caches keys (lib/api-keys/cache.ts) forgets them before it can answer
-- with a revoked one. In public, not in the ceilings schema: the functions migrations drop and
-- recreate every function there, and this one has a trigger depending on it.
CREATE FUNCTION notify_api_keys_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ceilings_api_keys', 'changed');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER api_keys_changed
AFTER INSERT OR DELETE OR UPDATE OF name, prefix, secret_hash, account, trusted, endpoint_keys, revoked_at ON api_keys
FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();
--> statement-breakpoint
CREATE TRIGGER api_keys_truncated
AFTER TRUNCATE ON api_keys
FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();
