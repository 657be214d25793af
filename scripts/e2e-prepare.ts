import { rm } from "node:fs/promises";
import path from "node:path";
import { sql } from "drizzle-orm";
import { migrateDatabase, openPostgres } from "@/db/client";
import { stopEmbeddedServer } from "@/db/embedded/server";
import { ensureAppRole } from "@/db/roles";
import { E2E_APP_ROLE } from "./e2e-app-role";
import { prepareDatabaseWithDemo, seedDemoIfEmpty } from "@/lib/demo";
import { env } from "@/lib/env";

// Recreates the e2e database from nothing, migrated and seeded with the demo: on Postgres the
// database named in DATABASE_URL (dropped and created from the TEST_DATABASE_URL database),
// otherwise the embedded server in the folder DATA_DIR. Run by scripts/e2e-server.sh, never against real data:
// it refuses any database not named ceilings_e2e* and any folder not named .data-e2e*.

async function preparePostgres(url: string, serverUrl: string | undefined): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!/^ceilings_e2e[a-z0-9_]*$/.test(name)) throw new Error(`refusing to recreate database "${name}": not an e2e database`);
  // Another database on the same server to run DROP and CREATE from: TEST_DATABASE_URL's own.
  const admin = new URL(serverUrl ?? url);
  if (admin.pathname === target.pathname) admin.pathname = "/postgres";
  const server = openPostgres(admin.toString(), { max: 1 });
  try {
    await server.db.execute(sql`drop database if exists ${sql.identifier(name)} with (force)`);
    await server.db.execute(sql`create database ${sql.identifier(name)}`);
  } finally {
    await server.close();
  }
  const database = openPostgres(url, { max: 2 });
  try {
    await migrateDatabase(database);
    await seedDemoIfEmpty(database.db);
    // The e2e server connects as this role (scripts/e2e-server.sh), as the app does in production.
    await ensureAppRole(database.db, E2E_APP_ROLE);
  } finally {
    await database.close();
  }
}

async function prepareEmbedded(dataDir: string): Promise<void> {
  if (!path.basename(path.resolve(dataDir)).startsWith(".data-e2e")) {
    throw new Error(`refusing to delete data folder "${dataDir}": not an e2e folder`);
  }
  await stopEmbeddedServer(dataDir);
  await rm(dataDir, { recursive: true, force: true });
  // Started, migrated and seeded here and left running for the e2e server, which finds it through
  // DATA_DIR; scripts/e2e-server.sh stops it when Playwright stops the server.
  await prepareDatabaseWithDemo();
}

async function main(): Promise<void> {
  const e = env();
  if (e.DATABASE_URL) await preparePostgres(e.DATABASE_URL, e.TEST_DATABASE_URL);
  else await prepareEmbedded(e.DATA_DIR);
}

main().catch((error: unknown) => {
  console.error(`e2e-prepare failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
