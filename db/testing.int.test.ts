import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { resultRows } from "./client";
import { endpoints } from "./schema";
import { createTestDatabase, dropStaleTestDatabases, skipWithoutDatabase, TestDatabaseError, withServerAdmin } from "./testing";

async function databaseExists(name: string): Promise<boolean> {
  return withServerAdmin(async (admin) => {
    const rows = resultRows(await admin.execute(sql`select 1 from pg_database where datname = ${name}`));
    return rows.length === 1;
  });
}

describe.skipIf(skipWithoutDatabase())("createTestDatabase", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  it("gives each suite its own migrated database, and drop() removes it", async () => {
    const a = await createTestDatabase("harness a");
    const b = await createTestDatabase("harness b");
    cleanups.push(a.drop, b.drop);
    expect(a.name).not.toBe(b.name);
    expect(a.name).toMatch(/^ceilings_t_harness_a_/);

    await a.db.insert(endpoints).values({ key: "only.in.a", name: "A", unit: "calls", perCallMax: 1 });
    expect(await b.db.select().from(endpoints)).toEqual([]);
    expect((await a.db.select().from(endpoints)).map((e) => e.key)).toEqual(["only.in.a"]);

    await a.drop();
    await a.drop();
    expect(await databaseExists(a.name)).toBe(false);
    expect(await databaseExists(b.name)).toBe(true);
  });

  it("refuses a pool that would crowd the server's 100 connections", async () => {
    await expect(createTestDatabase("too big", { max: 80 })).rejects.toThrow(TestDatabaseError);
  });

  it("drops leftovers older than an hour and leaves databases of runs still going", async () => {
    const old = `ceilings_t_stale_${(Date.now() - 2 * 3_600_000).toString(36)}_deadbeef`;
    await withServerAdmin((admin) => admin.execute(sql`create database ${sql.identifier(old)}`));
    const fresh = await createTestDatabase("fresh");
    cleanups.push(fresh.drop);

    const dropped = await dropStaleTestDatabases();
    // Every worker's first createTestDatabase runs this same cleanup, so another one may have
    // dropped the leftover first: what matters is that it is gone and the live database is not.
    expect(dropped).not.toContain(fresh.name);
    expect(await databaseExists(old)).toBe(false);
    expect(await databaseExists(fresh.name)).toBe(true);
  });
});
