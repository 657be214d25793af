import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { afterAll, describe, expect, it } from "vitest";
import { migrateDatabase, migrationsFolder, resultRows, type Db } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { CONTRACT_VERSION } from "@/lib/enforcement/contract";
import { applyFunctions, functionFiles, functionsFolder, functionsHash } from "./functions";

// db/functions/ is the contract: a migrated database holds exactly its functions, applied after the
// versioned migrations by one step that records the folder's hash and runs again only when the
// folder changed. Databases migrated before that step (functions from the migrations' copies, no
// hash) get the folder's once.

const functionNames = async (db: Db) =>
  resultRows<{ name: string }>(
    await db.execute(sql`select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'ceilings' order by 1`),
  ).map((r) => r.name);
const recorded = async (db: Db) => resultRows<{ hash: string }>(await db.execute(sql`select hash from function_applies order by id`)).map((r) => r.hash);

describe("db/functions", () => {
  it("every file holds one function of the ceilings schema, named like the file, opening with what it guarantees", () => {
    for (const f of functionFiles()) {
      const created = [...f.sql.matchAll(/CREATE OR REPLACE FUNCTION ceilings\.(\w+)\(/g)].map((m) => m[1]);
      expect(created, f.name).toEqual([f.name]);
      expect(f.sql.startsWith("--"), f.name).toBe(true);
      expect(f.sql, f.name).toMatch(/lock/i);
    }
  });

  it("no migration after 0036 creates or drops a function of the ceilings schema: db/functions/ holds them (a trigger's function in public stays in its migration)", () => {
    const journal = JSON.parse(readFileSync(path.join(migrationsFolder, "meta", "_journal.json"), "utf8")) as { entries: { idx: number; tag: string }[] };
    const later = journal.entries.filter((e) => e.idx > 36);
    for (const e of later)
      expect(readFileSync(path.join(migrationsFolder, `${e.tag}.sql`), "utf8"), e.tag).not.toMatch(/\b(create (or replace )?|drop )function\s+"?ceilings"?\./i);
  });
});

// Skipped only without a Postgres server to run on; npm test always starts one, and CI fails a skipped suite.
describe.skipIf(skipWithoutDatabase())("applying the functions", () => {
  const fresh = useTestDatabase("functions", { max: 2 });
  const old = useTestDatabase("functions_old", { migrate: false, max: 4 });
  const folders: string[] = [];
  afterAll(() => {
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  });

  it("a migrated database holds exactly the folder's functions, at the library's contract version, with the folder's hash recorded", async () => {
    expect(await functionNames(fresh.db)).toEqual(
      functionFiles()
        .map((f) => f.name)
        .sort(),
    );
    const version = resultRows<{ v: number }>(await fresh.db.execute(sql`select ceilings.contract_version() as v`));
    expect(version[0]?.v).toBe(CONTRACT_VERSION);
    expect(await recorded(fresh.ownerDb)).toEqual([functionsHash()]);
  });

  it("a database migrated before the step gets the folder's functions once; the next migrate leaves them alone; a changed folder is applied whole", async () => {
    // As every database was migrated before this step: the versioned migrations alone.
    await migrate(old.ownerDb, { migrationsFolder });
    expect(await recorded(old.ownerDb)).toEqual([]);
    const before = await functionNames(old.ownerDb);
    expect(await migrateDatabase(old.database)).toEqual({ functionsApplied: true });
    // Every function the migrations made is kept, and the ones added since come from the folder.
    const after = await functionNames(old.ownerDb);
    expect(after).toEqual(expect.arrayContaining(before));
    expect(after).toEqual(
      functionFiles()
        .map((f) => f.name)
        .sort(),
    );
    expect(await recorded(old.ownerDb)).toEqual([functionsHash()]);
    expect(await migrateDatabase(old.database)).toEqual({ functionsApplied: false });
    expect(await recorded(old.ownerDb)).toHaveLength(1);

    // A folder where one function changed and one is gone: the gone one is dropped, the changed one
    // is what the database runs. Four processes applying it at once apply it once.
    const changed = mkdtempSync(path.join(tmpdir(), "ceilings-functions-"));
    folders.push(changed);
    cpSync(functionsFolder, changed, { recursive: true });
    const contract = path.join(changed, "contract_version.sql");
    writeFileSync(contract, readFileSync(contract, "utf8").replace(/SELECT \d+/i, "SELECT 9999"));
    rmSync(path.join(changed, "format_money.sql"));
    const applied = await Promise.all(Array.from({ length: 4 }, () => applyFunctions(old.ownerDb, changed)));
    expect(applied.filter(Boolean)).toHaveLength(1);
    expect(resultRows<{ v: number }>(await old.ownerDb.execute(sql`select ceilings.contract_version() as v`))[0]?.v).toBe(9999);
    expect(await functionNames(old.ownerDb)).toEqual(after.filter((n) => n !== "format_money"));
    expect(await recorded(old.ownerDb)).toEqual([functionsHash(), functionsHash(changed)]);

    // A migration and a function apply commit together: when the apply fails, the migration is
    // rolled back with it, and the old functions never run against the new schema.
    const migrations = mkdtempSync(path.join(tmpdir(), "ceilings-migrations-"));
    folders.push(migrations);
    cpSync(migrationsFolder, migrations, { recursive: true });
    const journalFile = path.join(migrations, "meta", "_journal.json");
    const journal = JSON.parse(readFileSync(journalFile, "utf8")) as {
      entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[];
    };
    const newest = journal.entries.at(-1) as { idx: number; when: number };
    journal.entries.push({ idx: newest.idx + 1, version: "7", when: newest.when + 1, tag: "9999_rename", breakpoints: true });
    writeFileSync(journalFile, JSON.stringify(journal));
    writeFileSync(path.join(migrations, "9999_rename.sql"), "ALTER TABLE function_applies RENAME COLUMN files TO file_count;");
    const broken = mkdtempSync(path.join(tmpdir(), "ceilings-functions-"));
    folders.push(broken);
    cpSync(functionsFolder, broken, { recursive: true });
    writeFileSync(
      path.join(broken, "zz_broken.sql"),
      "-- Locks: none.\nCREATE OR REPLACE FUNCTION ceilings.zz_broken(x no_such_type) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;",
    );
    await expect(migrateDatabase(old.database, { migrations, functions: broken })).rejects.toThrow();
    const columns = resultRows<{ name: string }>(
      await old.ownerDb.execute(sql`select column_name as name from information_schema.columns where table_name = 'function_applies' order by 1`),
    ).map((r) => r.name);
    expect(columns).toContain("files");
    expect(columns).not.toContain("file_count");

    // Back to the folder: applied again, since it is not the hash recorded last.
    expect(await migrateDatabase(old.database)).toEqual({ functionsApplied: true });
    expect(await functionNames(old.ownerDb)).toEqual(after);
    expect(resultRows<{ v: number }>(await old.ownerDb.execute(sql`select ceilings.contract_version() as v`))[0]?.v).toBe(CONTRACT_VERSION);
  });
});
