import { closeDb, type Db, getDb } from "@/db/client";
import { prepareDatabaseWithDemo } from "@/lib/demo";
import { env } from "@/lib/env";

/**
 * The database the CLI works on: DATABASE_URL when set, else the embedded server in DATA_DIR, the
 * one a running dashboard uses (started for this command if no process runs it).
 */
export async function openCliDatabase(): Promise<{ db: Db; description: string; close: () => Promise<void> }> {
  const e = env();
  await prepareDatabaseWithDemo();
  const db = await getDb();
  return { db, description: e.DATABASE_URL ? "DATABASE_URL" : `the embedded database in ${e.DATA_DIR}`, close: closeDb };
}
