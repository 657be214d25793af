import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { openPostgres, resultRows } from "./client";
import { CuttableProxy } from "./cuttable-proxy";
import { appRoleWarning, AppRoleError, ensureAppRole, warnAboutAppRoleWhenReachable } from "./roles";
import { auditEvents } from "./schema";
import { databaseUrl, skipWithoutDatabase, TEST_APP_ROLE } from "./testing";
import { useTestDatabase } from "./testing-suite";
import { env } from "../lib/env";

describe.skipIf(skipWithoutDatabase())("the app role cannot rewrite the audit log", () => {
  const t = useTestDatabase("app_role");
  let id = 0;
  beforeAll(async () => {
    const [row] = await t.db
      .insert(auditEvents)
      .values({ actorType: "cli", actor: "test", action: "test.event", target: "x" })
      .returning({ id: auditEvents.id });
    id = row?.id ?? 0;
  });

  it("connects as the app role, which owns nothing and is no superuser", async () => {
    const [me] = resultRows<{ role: string; superuser: boolean }>(
      await t.db.execute(sql`select current_user as role, rolsuper as superuser from pg_roles where rolname = current_user`),
    );
    expect(me).toEqual({ role: TEST_APP_ROLE.role, superuser: false });
    expect(await appRoleWarning(t.db)).toBeNull();
    expect(await appRoleWarning(t.ownerDb)).toMatch(/superuser|owner/);
  });

  it("holds only INSERT and SELECT on the audit table, not just a trigger in the way", async () => {
    const [p] = resultRows<Record<string, boolean>>(
      await t.db.execute(sql`
        select ${sql.raw(["select", "insert", "update", "delete", "truncate", "references", "trigger"].map((x) => `has_table_privilege(current_user, 'audit_events', '${x}') as "${x}"`).join(", "))}`),
    );
    expect(p).toEqual({ select: true, insert: true, update: false, delete: false, truncate: false, references: false, trigger: false });
  });

  it("may add to the audit log and read it", async () => {
    const rows = await t.db.select().from(auditEvents);
    expect(rows.map((r) => r.id)).toContain(id);
  });

  const refused: [string, ReturnType<typeof sql>][] = [
    ["UPDATE", sql`update audit_events set reason = 'rewritten'`],
    ["DELETE", sql`delete from audit_events`],
    ["TRUNCATE", sql`truncate audit_events`],
    ["DISABLE TRIGGER", sql`alter table audit_events disable trigger user`],
    ["DROP TRIGGER", sql`drop trigger audit_events_no_update_delete on audit_events`],
    ["DROP TRIGGER (truncate)", sql`drop trigger audit_events_no_truncate on audit_events`],
    ["DROP TABLE", sql`drop table audit_events`],
    ["SET session_replication_role", sql`set session_replication_role = replica`],
    ["CREATE in public", sql`create table sneaky (id int)`],
    // The functions' applied hash (db/functions.ts): forged, the next migrate would skip a fix.
    ["INSERT into function_applies", sql`insert into function_applies (hash, files) values ('forged', 0)`],
    ["DELETE from function_applies", sql`delete from function_applies`],
    // What batches keep of an endpoint's configuration: a row written by hand would be a limit no page shows.
    [
      "INSERT into endpoint_config_cache",
      sql`insert into endpoint_config_cache values (1, now(), 'infinity', 1, 1, '{}', '{1}', '{g}', '{u}', '{1000000000}', array[now()], array['infinity'::timestamptz], '[[]]', '[{}]')`,
    ],
    ["UPDATE endpoint_config_cache", sql`update endpoint_config_cache set limit_value = '{1000000000}'`],
    ["DELETE from endpoint_config_cache", sql`delete from endpoint_config_cache`],
  ];
  for (const [what, statement] of refused) {
    it(`refuses ${what}`, async () => {
      await expect(t.db.execute(statement)).rejects.toMatchObject({ cause: { code: expect.stringMatching(/^42501$/) } });
      const [row] = await t.db.select().from(auditEvents);
      expect(row?.reason ?? null).toBeNull();
      expect((await t.db.select().from(auditEvents)).length).toBeGreaterThan(0);
    });
  }

  it("still updates and deletes the app's own working tables", async () => {
    await t.db.execute(sql`insert into sign_in_failures (key, failures) values ('account:x', 1)`);
    await t.db.execute(sql`update sign_in_failures set failures = 2 where key = 'account:x'`);
    await t.db.execute(sql`delete from sign_in_failures where key = 'account:x'`);
  });

  it("is idempotent and safe to race from many callers at once", async () => {
    await Promise.all(Array.from({ length: 6 }, () => ensureAppRole(t.ownerDb, TEST_APP_ROLE)));
    await expect(t.db.execute(sql`delete from audit_events`)).rejects.toThrow();
  });

  it("refuses, without altering it, a role that owns tables or holds privileged attributes", async () => {
    // Probe roles of this suite only; never the server's own superuser.
    await t.ownerDb.execute(
      sql`do $$ begin create role ceilings_test_probe_privileged createdb nologin; exception when duplicate_object or unique_violation then null; end $$`,
    );
    await t.ownerDb.execute(
      sql`do $$ begin create role ceilings_test_probe_owner nologin; exception when duplicate_object or unique_violation then null; end $$`,
    );
    await t.ownerDb.execute(sql`create table probe_owned (id int)`);
    await t.ownerDb.execute(sql`alter table probe_owned owner to ceilings_test_probe_owner`);
    await expect(ensureAppRole(t.ownerDb, { role: "ceilings_test_probe_privileged" })).rejects.toThrow(AppRoleError);
    await expect(ensureAppRole(t.ownerDb, { role: "ceilings_test_probe_owner" })).rejects.toThrow(AppRoleError);
    await expect(ensureAppRole(t.ownerDb, { role: "Robert'); drop table x;--" })).rejects.toThrow(AppRoleError);
    const probes = resultRows<{ rolname: string; rolcreatedb: boolean; rolcanlogin: boolean }>(
      await t.ownerDb.execute(sql`select rolname, rolcreatedb, rolcanlogin from pg_roles where rolname like 'ceilings_test_probe_%' order by rolname`),
    );
    expect(probes).toEqual([
      { rolname: "ceilings_test_probe_owner", rolcreatedb: false, rolcanlogin: false },
      { rolname: "ceilings_test_probe_privileged", rolcreatedb: true, rolcanlogin: false },
    ]);
    await t.ownerDb.execute(sql`drop table probe_owned`);
  });
});

describe.skipIf(skipWithoutDatabase())("the start-up check of the app role", () => {
  const t = useTestDatabase("app_role_start");

  // A dashboard started while the database did not answer used to throw from its instrumentation
  // hook, and Next then answered every request with a 500 for good (test:ha saw 190 of them).
  it("waits for a database that does not answer yet instead of failing, then warns once it does", async () => {
    const owner = new URL(databaseUrl(env().TEST_DATABASE_URL ?? "", t.name));
    const proxy = new CuttableProxy({ host: owner.hostname, port: Number(owner.port || 5432) });
    owner.hostname = "127.0.0.1";
    owner.port = String(await proxy.listen());
    proxy.silence();
    const pool = openPostgres(owner.toString(), { max: 1, connectTimeoutSeconds: 1 });
    const lines: string[] = [];
    let settled: "resolved" | "rejected" | undefined;
    try {
      const check = warnAboutAppRoleWhenReachable(pool.db, (line) => lines.push(line), 200).then(
        () => (settled = "resolved"),
        () => (settled = "rejected"),
      );
      await new Promise((r) => setTimeout(r, 2500));
      expect(settled).toBeUndefined();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/did not answer the app role check yet/);
      proxy.heal();
      await check;
      expect(settled).toBe("resolved");
      expect(lines.at(-1)).toMatch(/^WARNING: the app connects as .*superuser/);
    } finally {
      proxy.heal();
      await pool.close();
      await proxy.close();
    }
  }, 30_000);
});
