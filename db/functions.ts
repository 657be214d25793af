import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import type { Db } from "./client";

// db/functions/<name>.sql is the one readable source of each SQL function of the contract. They
// are applied after the versioned migrations (db/migrations/, which hold schema changes only) by
// one repeatable step, applyFunctions: when the folder's hash differs from the one the database
// last recorded, every function of the `ceilings` schema is dropped and the folder's are created,
// in one transaction, and the hash is recorded in function_applies. So a database holds exactly
// the folder's functions (a renamed or changed signature leaves nothing behind), and a database
// that already holds them is left alone.
//
// Migrations up to 0036 carry copies of the functions as they were (the way they were shipped
// before this step): an existing database has them, records no hash, and gets the folder's once.

export const functionsFolder = path.join(process.cwd(), "db", "functions");

/** The function files, by name (file name without .sql), sorted. */
export function functionFiles(folder = functionsFolder): { name: string; sql: string }[] {
  return readdirSync(folder)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((f) => ({ name: f.slice(0, -4), sql: readFileSync(path.join(folder, f), "utf8").trim() }));
}

/** The statements that replace every function of the `ceilings` schema with the folder's. */
export function functionsStatements(folder = functionsFolder): string[] {
  return [
    // Bodies are checked when called, so the files may reference each other in any order.
    "SET LOCAL check_function_bodies = off",
    "CREATE SCHEMA IF NOT EXISTS ceilings",
    "DO $$\nDECLARE\n  f regprocedure;\nBEGIN\n" +
      "  FOR f IN SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace\n" +
      "           WHERE n.nspname = 'ceilings' LOOP\n    EXECUTE 'DROP FUNCTION ' || f;\n  END LOOP;\nEND $$",
    ...functionFiles(folder).map((f) => f.sql),
    // What batches keep of each endpoint's configuration (endpoint_config_cache, 0045) was read by
    // the functions replaced here: the new ones read it again. Kept rows would otherwise outlive a
    // fix to how it is read, or a change made while older functions, which did not forget it, ran.
    "DO $$ BEGIN IF to_regclass('public.endpoint_config_cache') IS NOT NULL THEN DELETE FROM endpoint_config_cache; END IF; END $$",
  ];
}

/** The hash recorded when the folder is applied: of every statement, in order. */
export function functionsHash(folder = functionsFolder, statements = functionsStatements(folder)): string {
  const hash = createHash("sha256");
  for (const statement of statements) hash.update(statement).update("\0");
  return hash.digest("hex");
}

/**
 * Applies db/functions/ unless the database recorded its hash last; returns whether it did. Two
 * processes migrating at once queue on the table's lock, and the second finds the hash recorded.
 */
export async function applyFunctions(db: Db, folder = functionsFolder): Promise<boolean> {
  // The folder read once: the statements run are the ones hashed.
  const statements = functionsStatements(folder);
  const hash = functionsHash(folder, statements);
  return db.transaction(async (tx) => {
    await tx.execute(sql`lock table function_applies in exclusive mode`);
    const [last] = (await tx.execute(sql`select hash from function_applies order by id desc limit 1`)) as unknown as { hash: string }[];
    if (last?.hash === hash) return false;
    for (const statement of statements) await tx.execute(sql.raw(statement));
    await tx.execute(sql`insert into function_applies (hash, files) values (${hash}, ${functionFiles(folder).length})`);
    return true;
  });
}
