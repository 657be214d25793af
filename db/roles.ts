import { sql } from "drizzle-orm";
import { type Db, resultRows } from "./client";
import { sqlState } from "./sql-state";

// Least privilege: an owner role runs the migrations and owns every table; the app role (dashboard,
// worker, CLIs, HTTP API) owns nothing and holds only the grants below. Without ownership it cannot
// ALTER, DISABLE or DROP the audit log's trigger, and as a non-superuser it cannot set
// session_replication_role, so the append-only rule holds against the app itself.

export class AppRoleError extends Error {
  override name = "AppRoleError";
}

export type AppRole = { role: string; password?: string | null };

/** Tables the app may only add to and read: history nobody rewrites (staff_grants: who made whom, read by the independence rule). */
export const APPEND_ONLY_TABLES = ["audit_events", "staff_grants"] as const;

// Role names are cluster-wide and suites or processes may create the same one at once: two
// CREATE ROLE race on pg_authid's unique index, two ALTER ROLE on the same row ("tuple
// concurrently updated"). Both are retried; the outcome is the same role either way.
const RETRYABLE = new Set(["42710", "23505", "XX000", "40001", "40P01"]);

async function retrying<T>(work: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (error) {
      const state = sqlState(error);
      if (i >= attempts || state === undefined || !RETRYABLE.has(state)) throw error;
      await new Promise((r) => setTimeout(r, 20 * i + Math.floor(Math.random() * 30)));
    }
  }
}

/** A string literal for the few statements (CREATE/ALTER ROLE) that take no bind parameters. */
function literal(value: string): string {
  if (value.includes("\0")) throw new AppRoleError("the app role's password must not contain NUL");
  return `'${value.replaceAll("'", "''")}'`;
}

function checkRoleName(role: string): void {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role)) {
    throw new AppRoleError(`app role name must be lower-case letters, digits and _ (at most 63), got '${role}'`);
  }
}

/**
 * Creates the app role if it is missing, sets its password and attributes, and (re)grants it what
 * the app needs in the database `ownerDb` is connected to, as that database's owner. Idempotent
 * and safe to run from many processes at once; run it after every migration so new tables are
 * granted. Refuses a role that is a superuser or owns anything: that would not be least privilege.
 */
export async function ensureAppRole(ownerDb: Db, params: AppRole): Promise<void> {
  const { role } = params;
  checkRoleName(role);
  const id = sql.identifier(role);
  const password = params.password ? sql.raw(`password ${literal(params.password)}`) : sql.raw("password null");
  // Checked before anything is changed: ALTER ROLE below would strip a privileged role (even the
  // one running this) of its attributes, so an existing role must already be a plain login role.
  const [existing] = resultRows<{ privileged: boolean; me: boolean }>(
    await ownerDb.execute(sql`
      select (rolsuper or rolcreatedb or rolcreaterole or rolreplication or rolbypassrls) as privileged,
        rolname = current_user as me
      from pg_roles where rolname = ${role}`),
  );
  if (existing?.me) throw new AppRoleError(`role ${role} is the one running the migrations; the app role must be another`);
  if (existing?.privileged)
    throw new AppRoleError(`role ${role} has superuser, createdb, createrole, replication or bypassrls; refusing to use or alter it as the app role`);
  const [owned] = resultRows<{ n: number }>(
    await ownerDb.execute(sql`
      select count(*)::int as n from pg_class c join pg_roles r on r.oid = c.relowner
      where r.rolname = ${role}`),
  );
  if ((owned?.n ?? 0) > 0) throw new AppRoleError(`role ${role} owns ${owned?.n} relations in this database; the app role must own nothing`);

  await retrying(() =>
    ownerDb.execute(sql`
      do $$ begin
        create role ${id} login;
      exception when duplicate_object or unique_violation then null;
      end $$`),
  );
  await retrying(() => ownerDb.execute(sql`alter role ${id} with login nosuperuser nocreatedb nocreaterole noreplication nobypassrls inherit ${password}`));

  await retrying(() =>
    ownerDb.transaction(async (tx) => {
      // One grant run per database at a time; other databases have their own lock space.
      await tx.execute(sql`select pg_advisory_xact_lock(726345102)`);
      await tx.execute(sql`grant connect, temporary on database ${sql.identifier(await currentDatabase(tx))} to ${id}`);
      await tx.execute(sql`revoke create on schema public from public`);
      for (const schema of await appSchemas(tx)) {
        const sc = sql.identifier(schema);
        await tx.execute(sql`revoke create on schema ${sc} from ${id}`);
        await tx.execute(sql`grant usage on schema ${sc} to ${id}`);
        await tx.execute(sql`revoke all on all tables in schema ${sc} from ${id}`);
        await tx.execute(sql`grant select, insert, update, delete on all tables in schema ${sc} to ${id}`);
        await tx.execute(sql`grant usage, select on all sequences in schema ${sc} to ${id}`);
        await tx.execute(sql`grant execute on all functions in schema ${sc} to ${id}`);
      }
      for (const table of APPEND_ONLY_TABLES) {
        await tx.execute(sql`revoke update, delete on ${sql.identifier(table)} from ${id}`);
      }
      // The migrations' own record: a forged hash there would keep the next migrate from applying
      // the SQL functions (db/functions.ts). Read only.
      await tx.execute(sql`revoke insert, update, delete, truncate on function_applies from ${id}`);
      // What reserve_batch_arrays keeps of each endpoint's configuration: written only by
      // ceilings.endpoint_config (as the owner, from the tables), forgotten by every change. A row
      // written by hand would be a limit no page shows. Read only.
      await tx.execute(sql`revoke insert, update, delete, truncate on endpoint_config_cache from ${id}`);
    }),
  );
}

/** The schemas the migrations created (public, ceilings): not the catalogs or drizzle's own. */
async function appSchemas(db: Db): Promise<string[]> {
  const rows = resultRows<{ name: string }>(
    await db.execute(sql`
      select nspname as name from pg_namespace
      where nspname not in ('information_schema', 'drizzle') and left(nspname, 3) <> 'pg_'
      order by nspname`),
  );
  return rows.map((r) => r.name);
}

async function currentDatabase(db: Db): Promise<string> {
  const [row] = resultRows<{ name: string }>(await db.execute(sql`select current_database() as name`));
  if (!row) throw new AppRoleError("could not read the current database's name");
  return row.name;
}

/**
 * Why the connected role is not a least-privilege app role, or null when it is. Start-up prints
 * it: one DATABASE_URL for migrations and app works for a quick start, but the app then runs as an
 * owner that could disable the audit log's trigger.
 */
/**
 * appRoleWarning for a server starting up, without making the start depend on the database. Next
 * answers every request with a 500, for good, when its instrumentation hook throws: a dashboard
 * started while the cluster failed over (or before the database was up) never recovered. So the
 * check runs in the background, again every `retryMs` until the database answers, and says once
 * that it is waiting. Resolves when it has checked; never rejects.
 */
export async function warnAboutAppRoleWhenReachable(db: Db, log: (line: string) => void, retryMs = 5000): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const warning = await appRoleWarning(db);
      if (warning) log(`WARNING: ${warning}`);
      return;
    } catch (error) {
      if (attempt === 0)
        log(
          `the database did not answer the app role check yet (${error instanceof Error ? error.message : String(error)}); checking again every ${retryMs} ms`,
        );
      // Unreferenced: a process that is otherwise done does not wait for the next try.
      await new Promise((resolve) => setTimeout(resolve, retryMs).unref());
    }
  }
}

export async function appRoleWarning(db: Db): Promise<string | null> {
  const [row] = resultRows<{ role: string; superuser: boolean; owned: number }>(
    await db.execute(sql`
      select current_user as role, r.rolsuper as superuser,
        (select count(*)::int from pg_class c where c.relowner = r.oid) as owned
      from pg_roles r where r.rolname = current_user`),
  );
  if (!row) return null;
  if (!row.superuser && row.owned === 0) return null;
  const what = row.superuser ? "a superuser" : `the owner of ${row.owned} tables`;
  return (
    `the app connects as ${row.role}, ${what}: it could disable the audit log's trigger. ` +
    "Set MIGRATION_DATABASE_URL to the owner and DATABASE_URL to an app role, then run npm run db:migrate to create its grants."
  );
}
