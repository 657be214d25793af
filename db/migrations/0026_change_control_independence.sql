-- Change control without a way around it: everything that loosens spend is a raise, an approver is
-- independent of the requester, the CLI proves who it is, API keys carry scopes, every stop alerts.
--> statement-breakpoint
-- section: independence and staff tokens
--> statement-breakpoint
-- section: plans and accounts
--> statement-breakpoint
-- section: budgets, prices and raise ends
--> statement-breakpoint
-- section: api key scopes
-- A key carries explicit scopes (lib/api-keys/scopes.ts): `reserve` on the endpoints it is bound
-- to, or `accounts:read` / `accounts:write` with no endpoint. Before this, every trusted key could
-- move and read any account whatever endpoints it was bound to. A key keeps only what the docs
-- promised it: a key bound to endpoints was made to spend on them (docs/calling.md), so it keeps
-- `reserve` and nothing else; a trusted key bound to no endpoint could do nothing but the accounts
-- routes, i.e. it was the billing service's key (docs/accounts-and-plans.md), and keeps reading
-- and moving accounts; a key bound to an account and no endpoint keeps reading its own account.
ALTER TABLE "api_keys" ADD COLUMN "scopes" text[];
--> statement-breakpoint
UPDATE "api_keys" SET "scopes" = CASE
  WHEN cardinality("endpoint_keys") > 0 THEN ARRAY['reserve']::text[]
  WHEN "trusted" THEN ARRAY['accounts:read', 'accounts:write']::text[]
  ELSE ARRAY['accounts:read']::text[]
END;
--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "scopes" SET DEFAULT '{reserve}'::text[];
--> statement-breakpoint
ALTER TABLE "api_keys" ALTER COLUMN "scopes" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_scopes_known" CHECK (cardinality("scopes") >= 1 and "scopes" <@ array['reserve', 'accounts:read', 'accounts:write']::text[]);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_scopes_endpoints" CHECK (('reserve' = any("scopes")) = (cardinality("endpoint_keys") > 0) and (cardinality("endpoint_keys") = 0 or "scopes" = array['reserve']::text[]));
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_scopes_write_trusted" CHECK ("trusted" or not ('accounts:write' = any("scopes")));
--> statement-breakpoint
-- A change of scopes must empty every process's key cache like any other change of a key
-- (migration 0015): the trigger's column list gains scopes.
DROP TRIGGER "api_keys_changed" ON "api_keys";
--> statement-breakpoint
CREATE TRIGGER api_keys_changed
AFTER INSERT OR DELETE OR UPDATE OF name, prefix, secret_hash, account, trusted, endpoint_keys, scopes, revoked_at ON api_keys
FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();
--> statement-breakpoint
-- section: stops
SELECT 1;
