import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { z } from "zod";
import {
  createEmbeddedDatabase,
  type Db,
  migrateDatabase,
  migrationsFolder,
  openPostgres,
  resolveDatabaseUrl,
  resultRows,
  stopEmbeddedIfUnused,
} from "@/db/client";
import { EMBEDDED_APP_ROLE, type EmbeddedServer } from "@/db/embedded/server";
import { type AppRole, ensureAppRole } from "@/db/roles";
import { describeDatabaseUrl } from "@/db/multi-host";
import { env } from "@/lib/env";

// npm run db:migrate: applies the committed migrations as the owner (MIGRATION_DATABASE_URL) and
// then creates or updates the app role named in DATABASE_URL with only the grants the app needs.
// With DATABASE_URL alone it migrates as that role and warns that the app then runs as an owner.
// With neither, the embedded server: migrated as its superuser, the app role granted.

const Journal = z.object({ entries: z.array(z.object({ tag: z.string(), when: z.number() })) });

async function appliedTimes(db: Db): Promise<Set<number>> {
  const exists = resultRows<{ t: string | null }>(await db.execute(sql`select to_regclass('drizzle.__drizzle_migrations')::text as t`));
  if (!exists[0]?.t) return new Set();
  const rows = resultRows<{ created_at: string | number }>(await db.execute(sql`select created_at from drizzle.__drizzle_migrations`));
  return new Set(rows.map((r) => Number(r.created_at)));
}

/** The role DATABASE_URL logs in as, when it differs from the owner's and names the same database. */
function appRoleOf(appUrl: string, ownerUrl: string): { role: string; password: string | null } | string {
  const app = new URL(appUrl);
  const owner = new URL(ownerUrl);
  const role = decodeURIComponent(app.username);
  if (!role) return "DATABASE_URL names no user, so there is no app role to grant";
  if (role === decodeURIComponent(owner.username)) return "DATABASE_URL and MIGRATION_DATABASE_URL log in as the same role";
  if (app.host !== owner.host || app.pathname !== owner.pathname) {
    throw new Error("DATABASE_URL and MIGRATION_DATABASE_URL must name the same server and database");
  }
  return { role, password: app.password ? decodeURIComponent(app.password) : null };
}

async function main(): Promise<void> {
  const e = env();
  let embedded: EmbeddedServer | undefined;
  if (!e.MIGRATION_DATABASE_URL && !e.DATABASE_URL) {
    embedded = (await resolveDatabaseUrl()).embedded;
    if (embedded) await createEmbeddedDatabase(embedded);
  }
  const url = embedded?.url ?? e.MIGRATION_DATABASE_URL ?? e.DATABASE_URL;
  if (!url) throw new Error("no database to migrate: set DATABASE_URL (and MIGRATION_DATABASE_URL for the owner)");
  const journal = Journal.parse(JSON.parse(readFileSync(path.join(migrationsFolder, "meta", "_journal.json"), "utf8")));
  const database = openPostgres(url, { max: 1 });
  try {
    const before = await appliedTimes(database.db);
    const { functionsApplied } = await migrateDatabase(database);
    const after = await appliedTimes(database.db);
    const applied = journal.entries.filter((e) => !before.has(e.when) && after.has(e.when));
    const where = describeDatabaseUrl(url);
    if (functionsApplied) console.log(`${where}: applied the SQL functions of db/functions/`);
    if (applied.length === 0) {
      console.log(`${where}: already up to date (${after.size} migrations applied)`);
    } else {
      for (const e of applied) console.log(`${where}: applied ${e.tag}`);
      console.log(`${where}: ${applied.length} applied, ${after.size} in total`);
      // A migration can add a table, an index or a column the planner has no statistics for until
      // autovacuum comes by (docs/operations.md): analyse now, a few seconds even at production size.
      await database.db.execute(sql`analyze`);
      console.log(`${where}: analysed`);
    }
    const app: AppRole | string = embedded
      ? { role: EMBEDDED_APP_ROLE, password: embedded.appPassword }
      : e.DATABASE_URL && e.MIGRATION_DATABASE_URL
        ? appRoleOf(e.DATABASE_URL, e.MIGRATION_DATABASE_URL)
        : "only one URL is set";
    if (typeof app === "string") {
      console.warn(
        `${where}: WARNING: ${app}; the app will run as the owner, which can disable the audit log's trigger. Set MIGRATION_DATABASE_URL to the owner and DATABASE_URL to an app role.`,
      );
    } else {
      await ensureAppRole(database.db, app);
      console.log(`${where}: app role ${app.role} granted (owns nothing; the audit log is insert and select only)`);
    }
  } finally {
    await database.close();
    if (embedded?.startedHere) await stopEmbeddedIfUnused(embedded, e.DATA_DIR);
  }
}

main().catch((error: unknown) => {
  console.error(`db:migrate failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
