import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "@/db/client";
import { applyFunctions, functionsFolder } from "@/db/functions";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeBudget } from "./budget-fixtures";
import { reserve } from "./reserve";
import { countRows, makeEndpoint, openPools } from "./test-fixtures";

// What reserve_batch_arrays keeps of an endpoint's configuration (endpoint_config_cache) must never
// outlive a change: every change here is plain SQL, as typed in psql, with no call of
// lock_endpoints_for_change of its own, so only the triggers stand between a change and a batch
// deciding by the configuration before it. Each test first makes a call that keeps the endpoint's
// configuration, checks that it was kept, changes one thing, and expects the very next call to
// answer by the change. Every call names the caller the first one registered: a caller seen for the
// first time is decided in full by decide_batch, which reads the tables and would hide a kept row.

describe.skipIf(skipWithoutDatabase())("the endpoint configuration batches keep", () => {
  const t = useTestDatabase("endpoint_config", { max: 4 });

  const kept = (endpointId: number) => countRows(t.ownerDb, sql`select count(*) as n from endpoint_config_cache where id = ${endpointId}`);

  async function warm(key: string, endpointId: number): Promise<void> {
    const first = await reserve(t.db, { endpoint: key, amount: 1, caller: "acct_warm" });
    expect(first.status).toBe("granted");
    expect(await kept(endpointId)).toBe(1);
  }

  it("is kept by a batch and used by the next: a row for the current windows answers, one out of its windows does not", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    await warm(e.key, e.endpointId);
    // Made by hand (as the owner: the app role may not write it), a kept limit of 1,000 grants what
    // the ceiling of 10 refuses: the row is what batches decide by, which is why only
    // endpoint_config writes it.
    await t.ownerDb.execute(sql`update endpoint_config_cache set limit_value = '{1000}' where id = ${e.endpointId}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 50, caller: "acct_warm" })).toMatchObject({ status: "granted" });
    // The same row with its windows ended is read again from the tables (10) and kept anew.
    await t.ownerDb.execute(sql`update endpoint_config_cache set valid_until = now() - interval '1 second' where id = ${e.endpointId}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 50, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "ceiling" });
    const [row] = resultRows<{ v: string; live: boolean }>(
      await t.ownerDb.execute(
        sql`select limit_value::text as v, valid_from <= now() and now() < valid_until as live from endpoint_config_cache where id = ${e.endpointId}`,
      ),
    );
    expect(row).toEqual({ v: "{10}", live: true });
    // And one whose windows have not begun (a row kept for tomorrow's window) is not used today.
    await t.ownerDb.execute(sql`update endpoint_config_cache set limit_value = '{1000}', valid_from = now() + interval '1 day' where id = ${e.endpointId}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 50, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "ceiling" });
  });

  it("forgets a ceiling's new value and a kill switch typed in SQL: the next call answers by them", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    await warm(e.key, e.endpointId);
    await t.db.execute(sql`update ceilings set value = 10, max_value = greatest(max_value, 10) where id = ${e.ceilingIds[0]}`);
    expect(await kept(e.endpointId)).toBe(0);
    expect(await reserve(t.db, { endpoint: e.key, amount: 10, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "ceiling" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 9, caller: "acct_warm" })).toMatchObject({ status: "granted" });
    expect(await kept(e.endpointId)).toBe(1);
    await t.db.execute(sql`update ceilings set value = 0 where id = ${e.ceilingIds[0]}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "kill_switch" });
    // A killed endpoint is decided in full each time: nothing is kept for it.
    expect(await kept(e.endpointId)).toBe(0);
  });

  it("forgets a new ceiling and a removed one", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    await warm(e.key, e.endpointId);
    await t.db.execute(sql`insert into ceilings (endpoint_id, metric, scope, "window", value, min_value, max_value, default_value)
                           values (${e.endpointId}, 'calls', 'global', 'utc_day', 1, 0, 1, 1)`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).toMatchObject({ status: "granted" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "ceiling" });
    await t.db.execute(sql`delete from ceilings where endpoint_id = ${e.endpointId} and metric = 'calls'`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).toMatchObject({ status: "granted" });
  });

  it("forgets the endpoint's own row: per-call max, price, archive", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await warm(e.key, e.endpointId);
    await t.db.execute(sql`update endpoints set per_call_max = 3 where id = ${e.endpointId}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 4, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "per_call_max" });
    await t.db.execute(sql`update endpoints set parts = '[{"name":"units","pricePico":7000000}]'::jsonb where id = ${e.endpointId}`);
    const priced = await reserve(t.db, { endpoint: e.key, amount: 3, caller: "acct_warm" });
    expect(priced.status).toBe("granted");
    const [money] = resultRows<{ money: string; prices: unknown }>(
      await t.ownerDb.execute(sql`select money::text, prices from reservations where id = ${priced.status === "granted" ? priced.reservationId : ""}`),
    );
    expect(money).toEqual({ money: "21", prices: { units: 7_000_000 } });
    await t.db.execute(sql`update endpoints set archived_at = now() where id = ${e.endpointId}`);
    await expect(reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).rejects.toThrow(/is archived/);
    expect(await kept(e.endpointId)).toBe(0);
  });

  it("forgets a budget's value, its archive, and a member added or removed", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await t.db.execute(sql`update endpoints set parts = '[{"name":"units","pricePico":1000000}]'::jsonb where id = ${e.endpointId}`);
    await warm(e.key, e.endpointId);
    // A budget made with its member in plain SQL: the insert into budget_members forgets the row.
    const budget = await makeBudget(t.db, { endpointIds: [], value: 5 });
    await t.db.execute(sql`insert into budget_members (budget_id, endpoint_id) values (${budget.id}, ${e.endpointId})`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 6, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "budget" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 5, caller: "acct_warm" })).toMatchObject({ status: "granted" });
    await t.db.execute(sql`update budgets set value = 8, max_value = greatest(max_value, 8) where id = ${budget.id}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 4, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "budget" });
    expect(await reserve(t.db, { endpoint: e.key, amount: 3, caller: "acct_warm" })).toMatchObject({ status: "granted" });
    // Raised, then lowered below what a kept 100 would let through on the fast path.
    await t.db.execute(sql`update budgets set value = 100, max_value = greatest(max_value, 100) where id = ${budget.id}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).toMatchObject({ status: "granted" });
    await t.db.execute(sql`update budgets set value = 9 where id = ${budget.id}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "budget" });
    await t.db.execute(sql`update budgets set archived_at = now() where id = ${budget.id}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 50, caller: "acct_warm" })).toMatchObject({ status: "granted" });
    await t.db.execute(sql`update budgets set archived_at = null where id = ${budget.id}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 50, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "budget" });
    await t.db.execute(sql`delete from budget_members where budget_id = ${budget.id}`);
    expect(await reserve(t.db, { endpoint: e.key, amount: 50, caller: "acct_warm" })).toMatchObject({ status: "granted" });
  });

  it("forgets every endpoint's when a table of configuration is emptied (TRUNCATE fires no row trigger)", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await warm(e.key, e.endpointId);
    await t.ownerDb.execute(sql`truncate budget_members`);
    expect(await countRows(t.ownerDb, sql`select count(*) as n from endpoint_config_cache`)).toBe(0);
  });

  it("forgets it under REPEATABLE READ too, whose snapshot cannot see a row kept while the change waited", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    await warm(e.key, e.endpointId);
    await t.db.execute(sql`update ceilings set value = 90 where id = ${e.ceilingIds[0]}`);
    expect(await kept(e.endpointId)).toBe(0);
    const change = openPostgres(t.url, { max: 1 });
    try {
      await change.db.transaction(
        async (tx) => {
          await tx.execute(sql`select 1`); // the transaction's snapshot, before the row below is kept
          expect((await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).status).toBe("granted");
          expect(await kept(e.endpointId)).toBe(1);
          await tx.execute(sql`update ceilings set value = 0 where id = ${e.ceilingIds[0]}`);
        },
        { isolationLevel: "repeatable read" },
      );
    } finally {
      await change.close();
    }
    expect(await kept(e.endpointId)).toBe(0);
    expect(await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "kill_switch" });
  });

  it("is not kept from a REPEATABLE READ snapshot older than a change", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    await warm(e.key, e.endpointId);
    const reader = openPostgres(t.url, { max: 1 });
    try {
      await reader.db.transaction(
        async (tx) => {
          await tx.execute(sql`select 1`); // a snapshot with the ceiling at 100
          await t.db.execute(sql`update ceilings set value = 10 where id = ${e.ceilingIds[0]}`);
          // Called by hand (any app connection may): it reads 100 by its snapshot, and keeps nothing.
          await tx.execute(sql`select * from ceilings.endpoint_config(${e.endpointId})`);
        },
        { isolationLevel: "repeatable read" },
      );
    } finally {
      await reader.close();
    }
    expect(await kept(e.endpointId)).toBe(0);
    expect(await reserve(t.db, { endpoint: e.key, amount: 50, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "ceiling" });
  });

  it("orders a member added against an update of its budget: the update's value binds the new member's next call", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await t.db.execute(sql`update endpoints set parts = '[{"name":"units","pricePico":1000000}]'::jsonb where id = ${e.endpointId}`);
    await warm(e.key, e.endpointId);
    const budget = await makeBudget(t.db, { endpointIds: [], value: 500 });
    const updater = openPostgres(t.url, { max: 1 });
    const adder = openPostgres(t.url, { max: 1 });
    try {
      // The budget lowered to 5 in a transaction left open; the endpoint added to it meanwhile.
      let commit: () => void = () => undefined;
      const committing = new Promise<void>((r) => (commit = r));
      let updated: () => void = () => undefined;
      const isUpdated = new Promise<void>((r) => (updated = r));
      const update = updater.db.transaction(async (tx) => {
        await tx.execute(sql`update budgets set value = 5 where id = ${budget.id}`);
        updated();
        await committing;
      });
      await isUpdated;
      // (.then sends it: a drizzle query runs when it is awaited.)
      let added = false;
      const add = adder.db.execute(sql`insert into budget_members (budget_id, endpoint_id) values (${budget.id}, ${e.endpointId})`).then(() => (added = true));
      // The insert waits for the update's commit: without that it would commit first, and a batch
      // between the two would keep the budget at 500 for after the update, which forgets only the
      // members it saw.
      await new Promise((r) => setTimeout(r, 300));
      expect(added).toBe(false);
      expect((await reserve(t.db, { endpoint: e.key, amount: 6, caller: "acct_warm" })).status).toBe("granted");
      commit();
      await update;
      await add;
    } finally {
      await updater.close();
      await adder.close();
    }
    expect(await reserve(t.db, { endpoint: e.key, amount: 6, caller: "acct_warm" })).toMatchObject({ status: "refused", gate: "budget" });
  });

  it("forgets every endpoint's when the functions are applied again (a fix to how it is read)", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await warm(e.key, e.endpointId);
    const changed = mkdtempSync(path.join(tmpdir(), "ceilings-functions-"));
    try {
      cpSync(functionsFolder, changed, { recursive: true });
      writeFileSync(path.join(changed, "zz_marker.sql"), "CREATE OR REPLACE FUNCTION ceilings.zz_marker() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$");
      expect(await applyFunctions(t.ownerDb, changed)).toBe(true);
      expect(await kept(e.endpointId)).toBe(0);
      await warm(e.key, e.endpointId);
      expect(await applyFunctions(t.ownerDb)).toBe(true);
      expect(await kept(e.endpointId)).toBe(0);
    } finally {
      rmSync(changed, { recursive: true, force: true });
    }
  });

  it("binds a lowered ceiling on the next batch of every process calling through it", async () => {
    // Four pools (each a process's batcher) reserve 1 unit at a time, in parallel, before and after
    // the ceiling drops to what was already taken plus 10: exactly 10 more are granted after it.
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const pools = openPools(t.url, 4, 4);
    try {
      const burst = () =>
        Promise.all(pools.dbs.flatMap((db) => Array.from({ length: 50 }, (_, i) => reserve(db, { endpoint: e.key, amount: 1, caller: `acct_${i % 7}` }))));
      expect((await burst()).every((d) => d.status === "granted")).toBe(true);
      expect(await kept(e.endpointId)).toBe(1);
      await t.db.execute(sql`update ceilings set value = 210 where id = ${e.ceilingIds[0]}`);
      const after = await burst();
      expect(after.filter((d) => d.status === "granted")).toHaveLength(10);
      expect(after.filter((d) => d.status === "refused" && d.gate === "ceiling")).toHaveLength(190);
    } finally {
      await pools.close();
    }
  });
});
