import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres } from "@/db/client";
import { createTestDatabase, skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { CONTRACT_VERSION } from "./contract";
import { batcherFor, reserve } from "./reserve";
import { makeEndpoint, PATIENT } from "./test-fixtures";
import { unavailableCounts } from "./unavailable";

// The library speaks one version of the SQL contract. A database migrated to another (or never
// migrated) refuses every reservation as unavailable, saying what to run, instead of calling a
// function signature that is not there.

describe.skipIf(skipWithoutDatabase())("contract version", () => {
  const t = useTestDatabase("contract", { max: 4 });

  it("refuses every reservation on another contract version, naming npm run db:migrate", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const current = openPostgres(t.url, { max: 2 });
    const stale = openPostgres(t.url, { max: 2 });
    try {
      batcherFor(current.db, PATIENT);
      expect((await reserve(current.db, { endpoint: e.key, amount: 1 })).status).toBe("granted");
      await t.ownerDb.execute(sql`create or replace function ceilings.contract_version() returns int language sql immutable as 'select 1'`);
      batcherFor(stale.db, PATIENT);
      const before = unavailableCounts().contract_version;
      const decisions = await Promise.all(Array.from({ length: 5 }, () => reserve(stale.db, { endpoint: e.key, amount: 1 })));
      for (const d of decisions) {
        expect(d).toMatchObject({ status: "refused", gate: "unavailable" });
        expect(d.status === "refused" && d.message).toContain("npm run db:migrate");
        expect(d.status === "refused" && d.message).toContain("version 1");
      }
      expect(unavailableCounts().contract_version).toBe(before + 5);
      // Without contract_version() at all: a database migrated before it existed.
      await t.ownerDb.execute(sql`drop function ceilings.contract_version()`);
      await new Promise((r) => setTimeout(r, 1100));
      const older = await reserve(stale.db, { endpoint: e.key, amount: 1 });
      expect(older.status === "refused" && older.message).toContain("npm run db:migrate");
    } finally {
      await t.ownerDb.execute(
        sql.raw(`create or replace function ceilings.contract_version() returns int language sql immutable as 'select ${CONTRACT_VERSION}'`),
      );
      await current.close();
      await stale.close();
    }
  });

  it("counts a database without the ceilings schema (3F000) as not_configured", async () => {
    const empty = await createTestDatabase("unmigrated_contract", { max: 2, migrate: false });
    try {
      const before = unavailableCounts();
      const d = await reserve(empty.db, { endpoint: "any.thing", amount: 1 });
      expect(d).toMatchObject({ status: "refused", gate: "unavailable" });
      expect(d.status === "refused" && d.message).toContain("not_configured");
      expect(d.status === "refused" && d.message).toContain("npm run db:migrate");
      const after = unavailableCounts();
      expect(after.not_configured).toBe(before.not_configured + 1);
      expect(after.unknown).toBe(before.unknown);
    } finally {
      await empty.drop();
    }
  });
});
