import { existsSync } from "node:fs";
import path from "node:path";
import { type Database, migrateDatabase, openPglite, openPostgres } from "@/db/client";
import { env } from "@/lib/env";

export class DatabaseInUseError extends Error {
  override name = "DatabaseInUseError";
}

/**
 * The database the CLI works on: DATABASE_URL when set, else the embedded data folder. PGlite
 * allows one process per folder, and while a process holds it a postmaster.pid file exists, so
 * the CLI refuses rather than corrupt the dashboard's database.
 */
export async function openCliDatabase(): Promise<{ database: Database; description: string }> {
  const e = env();
  if (e.DATABASE_URL) {
    const database = openPostgres(e.DATABASE_URL, { max: 1 });
    return { database, description: "DATABASE_URL" };
  }
  const dir = path.resolve(e.DATA_DIR, "pglite");
  if (existsSync(path.join(dir, "postmaster.pid"))) {
    throw new DatabaseInUseError(
      `the embedded database in ${dir} is in use (postmaster.pid exists).\n` +
        "Stop the dashboard and run this again, or set DATABASE_URL to use a Postgres server.\n" +
        "If nothing is running, a previous process crashed: delete that postmaster.pid file.",
    );
  }
  const database = await openPglite(dir);
  await migrateDatabase(database);
  return { database, description: dir };
}
