-- Change control without a way around it: everything that loosens spend is a raise, an approver is
-- independent of the requester, the CLI proves who it is, API keys carry scopes, every stop alerts.
--> statement-breakpoint
-- section: independence and staff tokens
-- Who gave whom control of a staff account (created it, raised its role, set its password): the
-- database's independence rule (ceilings.staff_independent) walks these rows. Append-only.
CREATE TABLE "staff_grants" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "staff_grants_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"staff_id" integer NOT NULL,
	"granted_by_id" integer,
	"granted_by" text NOT NULL,
	"kind" text NOT NULL,
	"role" "staff_role",
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "staff_grants_kind" CHECK ("staff_grants"."kind" in ('create', 'promote', 'password')),
	CONSTRAINT "staff_grants_not_self" CHECK ("staff_grants"."granted_by_id" is null or "staff_grants"."granted_by_id" <> "staff_grants"."staff_id")
);
--> statement-breakpoint
ALTER TABLE "staff_grants" ADD CONSTRAINT "staff_grants_staff_id_staff_id_fk" FOREIGN KEY ("staff_id") REFERENCES "public"."staff"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "staff_grants" ADD CONSTRAINT "staff_grants_granted_by_id_staff_id_fk" FOREIGN KEY ("granted_by_id") REFERENCES "public"."staff"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "staff_grants_staff_idx" ON "staff_grants" USING btree ("staff_id");
--> statement-breakpoint
CREATE INDEX "staff_grants_granted_by_idx" ON "staff_grants" USING btree ("granted_by_id");
--> statement-breakpoint
-- Like the audit log (0002): a trigger binds even the owner; the app role also lacks UPDATE/DELETE.
CREATE FUNCTION staff_grants_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'staff_grants is append-only: % is not allowed', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER staff_grants_no_update_delete
  BEFORE UPDATE OR DELETE ON staff_grants
  FOR EACH ROW EXECUTE FUNCTION staff_grants_append_only();
--> statement-breakpoint
CREATE TRIGGER staff_grants_no_truncate
  BEFORE TRUNCATE ON staff_grants
  FOR EACH STATEMENT EXECUTE FUNCTION staff_grants_append_only();
--> statement-breakpoint
-- Backfill from the audit trail: staff.add (create), staff.role to a higher role (promote) and
-- staff.password set by someone else (password), actor email -> target email mapped to ids. An
-- actor that is not a staff member (the CLI's OS user, the seed) leaves no parent.
INSERT INTO staff_grants (staff_id, granted_by_id, granted_by, kind, role, at)
SELECT t.id,
       nullif(a.id, t.id),
       e.actor,
       CASE e.action WHEN 'staff.add' THEN 'create' WHEN 'staff.role' THEN 'promote' ELSE 'password' END,
       CASE e.action WHEN 'staff.add' THEN (e.details->>'role')::staff_role WHEN 'staff.role' THEN (e.details->>'to')::staff_role END,
       e.at
FROM audit_events e
JOIN staff t ON lower(t.email) = lower(e.target)
LEFT JOIN staff a ON e.actor_type = 'staff' AND lower(a.email) = lower(e.actor)
WHERE (e.action = 'staff.add' AND e.details->>'role' IN ('viewer', 'operator', 'admin'))
   OR (e.action = 'staff.role' AND e.details->>'to' IN ('viewer', 'operator', 'admin') AND e.details->>'from' IN ('viewer', 'operator', 'admin')
       AND array_position(ARRAY['viewer', 'operator', 'admin'], e.details->>'to') > array_position(ARRAY['viewer', 'operator', 'admin'], e.details->>'from'))
   OR (e.action = 'staff.password' AND a.id IS NOT NULL AND a.id <> t.id)
ORDER BY e.id;
--> statement-breakpoint
-- A personal token for the command line's approve, reject, acknowledge and break glass: only its
-- SHA-256 is stored; dead once revoked, its owner disabled, or their session version moved on.
CREATE TABLE "staff_tokens" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "staff_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"staff_id" integer NOT NULL,
	"name" text NOT NULL,
	"prefix" text NOT NULL,
	"secret_hash" text NOT NULL,
	"session_version" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "staff_tokens_secret_hash_unique" UNIQUE("secret_hash")
);
--> statement-breakpoint
ALTER TABLE "staff_tokens" ADD CONSTRAINT "staff_tokens_staff_id_staff_id_fk" FOREIGN KEY ("staff_id") REFERENCES "public"."staff"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "staff_tokens_staff_idx" ON "staff_tokens" USING btree ("staff_id");
--> statement-breakpoint
-- The second person is independent of the requester, in the database: a decision (approve,
-- reject, stale; a cancellation is the requester's own and stays allowed) or an acknowledgement by
-- someone ceilings.staff_independent says is not independent of the requester is refused, whatever
-- path wrote it. Checked on every INSERT, and on every UPDATE that changes the state, the decider,
-- the acknowledger or the requester; not again on an update that changes none of them (a grant
-- made after a decision does not undo it). A decided row is final: its state never changes again
-- (a rejection turned into 'applied' would be a decision nobody took), so only a pending request
-- becomes a decision. A decided state with no decider is the CHECK change_requests_decided_by
-- (section locks). In public: the functions migrations drop every
-- ceilings.* function, and a trigger depends on this one (it calls ceilings.* by name at run time).
-- The old CHECKs change_requests_second_person and _ack_second_person stay as a backstop for the
-- plainest case (they hold even with triggers disabled); this trigger fires first and subsumes them.
CREATE FUNCTION change_requests_independent() RETURNS trigger
LANGUAGE plpgsql SET search_path = public, pg_temp AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.state IS DISTINCT FROM OLD.state AND OLD.state <> 'pending' THEN
    RAISE EXCEPTION 'change request #% is % and stays so: only a pending request is decided (to %)',
      OLD.id, OLD.state, NEW.state
      USING ERRCODE = 'check_violation', CONSTRAINT = 'change_requests_decided_final', TABLE = 'change_requests';
  END IF;
  IF NEW.decided_by_id IS NOT NULL AND NEW.state <> 'cancelled'
     AND (TG_OP = 'INSERT' OR NEW.state IS DISTINCT FROM OLD.state OR NEW.decided_by_id IS DISTINCT FROM OLD.decided_by_id
          OR NEW.requested_by_id IS DISTINCT FROM OLD.requested_by_id)
     AND NOT ceilings.staff_independent(NEW.requested_by_id, NEW.decided_by_id) THEN
    RAISE EXCEPTION 'change request #%: staff #% may not decide it: they are not independent of its requester, staff #% (the same person, or one created, promoted or set the password of the other, directly or through others)',
      NEW.id, NEW.decided_by_id, NEW.requested_by_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'change_requests_independent', TABLE = 'change_requests';
  END IF;
  IF NEW.acknowledged_by_id IS NOT NULL
     AND (TG_OP = 'INSERT' OR NEW.acknowledged_by_id IS DISTINCT FROM OLD.acknowledged_by_id
          OR NEW.requested_by_id IS DISTINCT FROM OLD.requested_by_id OR NEW.state IS DISTINCT FROM OLD.state)
     AND NOT ceilings.staff_independent(NEW.requested_by_id, NEW.acknowledged_by_id) THEN
    RAISE EXCEPTION 'change request #%: staff #% may not acknowledge it: they are not independent of staff #%, who broke glass (the same person, or one created, promoted or set the password of the other, directly or through others)',
      NEW.id, NEW.acknowledged_by_id, NEW.requested_by_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'change_requests_independent', TABLE = 'change_requests';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER change_requests_independent
  BEFORE INSERT OR UPDATE ON change_requests
  FOR EACH ROW EXECUTE FUNCTION change_requests_independent();
--> statement-breakpoint
-- section: plans and accounts
--> statement-breakpoint
-- A plan an API key may move accounts to even when that loosens them (billing upgrades): off for
-- every plan; turning it on is a raise asked of two admins (lib/changes/plan-kinds.ts).
ALTER TABLE "plans" ADD COLUMN "key_assignable" boolean DEFAULT false NOT NULL;
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
-- section: locks
-- A decision has a decider: applied or rejected names who decided it, unless it is a break glass
-- (written applied by its requester alone, acknowledged later). The states the worker or the
-- requester set stay valid without one: expired (the worker), stale, cancelled (the requester,
-- who is then the decider), pending.
ALTER TABLE "change_requests" ADD CONSTRAINT "change_requests_decided_by" CHECK ("change_requests"."state" not in ('applied', 'rejected') or "change_requests"."decided_by_id" is not null or "change_requests"."break_glass");
