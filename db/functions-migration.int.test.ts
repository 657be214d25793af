import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { CONTRACT_VERSION } from "@/lib/enforcement/contract";
import { functionFiles, functionsMigrationSql, latestFunctionsMigration } from "./functions-migration";

// db/functions/ is the contract: a migrated database holds exactly its functions, and the newest
// generated migration is what the folder generates today (an edited function without a new
// migration fails here).

describe("db/functions and the migrations", () => {
  it("the newest generated migration matches db/functions/ (run npm run db:functions -- <name>)", () => {
    expect(latestFunctionsMigration()?.sql).toBe(functionsMigrationSql());
  });

  it("every file holds one function of the ceilings schema, named like the file, opening with what it guarantees", () => {
    for (const f of functionFiles()) {
      const created = [...f.sql.matchAll(/CREATE OR REPLACE FUNCTION ceilings\.(\w+)\(/g)].map((m) => m[1]);
      expect(created, f.name).toEqual([f.name]);
      expect(f.sql.startsWith("--"), f.name).toBe(true);
      expect(f.sql, f.name).toMatch(/lock/i);
    }
  });
});

describe.skipIf(skipWithoutDatabase())("migrating an empty database", () => {
  const t = useTestDatabase("functions", { max: 2 });

  it("yields exactly the functions in db/functions/, at the library's contract version", async () => {
    const rows = resultRows<{ name: string }>(
      await t.db.execute(sql`select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                             where n.nspname = 'ceilings' order by 1`),
    );
    expect(rows.map((r) => r.name)).toEqual(functionFiles().map((f) => f.name).sort());
    const version = resultRows<{ v: number }>(await t.db.execute(sql`select ceilings.contract_version() as v`));
    expect(version[0]?.v).toBe(CONTRACT_VERSION);
  });
});
