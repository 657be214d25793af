import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { type Db, migrateDatabase, migrationsFolder, openPostgres, resultRows } from "@/db/client";
import { describeDatabaseUrl } from "@/db/multi-host";
import { env } from "@/lib/env";

// npm run db:migrate: applies the committed migrations to the Postgres server in DATABASE_URL and
// says which ones it applied. The embedded database migrates itself when the dashboard starts.

const Journal = z.object({ entries: z.array(z.object({ tag: z.string(), when: z.number() })) });

async function appliedTimes(db: Db): Promise<Set<number>> {
  const exists = resultRows<{ t: string | null }>(
    await db.execute(sql`select to_regclass('drizzle.__drizzle_migrations')::text as t`),
  );
  if (!exists[0]?.t) return new Set();
  const rows = resultRows<{ created_at: string | number }>(
    await db.execute(sql`select created_at from drizzle.__drizzle_migrations`),
  );
  return new Set(rows.map((r) => Number(r.created_at)));
}

async function main(): Promise<void> {
  const url = env().DATABASE_URL;
  if (!url) {
    throw new Error(
      "DATABASE_URL is not set. Set it to the server to migrate, e.g. DATABASE_URL=postgres://user@host:5432/ceilings npm run db:migrate\n" +
        "(the embedded database in DATA_DIR migrates itself when the dashboard starts)",
    );
  }
  const journal = Journal.parse(JSON.parse(readFileSync(path.join(migrationsFolder, "meta", "_journal.json"), "utf8")));
  const database = openPostgres(url, { max: 1 });
  try {
    const before = await appliedTimes(database.db);
    await migrateDatabase(database);
    const after = await appliedTimes(database.db);
    const applied = journal.entries.filter((e) => !before.has(e.when) && after.has(e.when));
    const where = describeDatabaseUrl(url);
    if (applied.length === 0) {
      console.log(`${where}: already up to date (${after.size} migrations applied)`);
    } else {
      for (const e of applied) console.log(`${where}: applied ${e.tag}`);
      console.log(`${where}: ${applied.length} applied, ${after.size} in total`);
    }
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(`db:migrate failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
