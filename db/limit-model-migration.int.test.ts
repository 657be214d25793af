import { rmSync } from "node:fs";
import { sql } from "drizzle-orm";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { afterAll, describe, expect, it } from "vitest";
import { migrateDatabase, resultRows, type Db } from "@/db/client";
import { migrationsBefore } from "@/db/migration-fixtures";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";

// The one limit model moves a database that holds data: a database filled at the schema before it
// (0038: overrides in ceiling_overrides and budget_overrides, plan values in plan_ceiling_values and
// plan_budget_values) is migrated, and every override, kill, plan value and block answers as it
// did, now keyed by the limit (limit_overrides, plan_limit_values).

const FIRST_OF_THE_MODEL = "0039_limit_overrides";

type Binding = { kind: string; id: number; caller: string; value: number; source: string };

/** What binds every account named on every per-account limit: caller_limit and account_budget_limit. */
async function bindings(db: Db, callers: string[]): Promise<Binding[]> {
  const list = JSON.stringify(callers);
  return resultRows<Binding>(
    await db.execute(sql`
      select 'ceiling' as kind, c.id, k.caller, (ceilings.caller_limit(c.id, k.caller)).value::float8 as value, (ceilings.caller_limit(c.id, k.caller)).source
        from ceilings c cross join jsonb_array_elements_text(${list}::jsonb) k(caller) where c.scope = 'caller'
      union all
      select 'budget', b.id, k.caller, (ceilings.account_budget_limit(b.id, k.caller)).value::float8, (ceilings.account_budget_limit(b.id, k.caller)).source
        from budgets b cross join jsonb_array_elements_text(${list}::jsonb) k(caller) where b.scope = 'account'
      order by 1, 2, 3`),
  );
}

describe.skipIf(skipWithoutDatabase())("the one limit model's migration", () => {
  const t = useTestDatabase("limit_model", { migrate: false, max: 4 });
  const folders: string[] = [];
  afterAll(() => {
    for (const f of folders) rmSync(f, { recursive: true, force: true });
  });

  it("moves every override (0 included) and plan value of both kinds to the limit, and every limit answers as it did", async () => {
    const before = migrationsBefore(FIRST_OF_THE_MODEL);
    folders.push(before);
    await migrate(t.ownerDb, { migrationsFolder: before });
    const db = t.ownerDb;

    // Today's data, at today's schema: two endpoints, per-caller and global ceilings (one killed),
    // a per-account and a global budget, plans with values, a blocked account, overrides of both
    // kinds including 0.
    await db.execute(sql`
      insert into endpoints (key, name, unit, per_call_max) values ('mail.send', 'Mail', 'emails', 5), ('llm.chat', 'Chat', 'tokens', 100)`);
    await db.execute(sql`
      insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value)
      select e.id, v.metric::ceiling_metric, v.scope::ceiling_scope, 'utc_day', v.value, 1000000, 10
        from (values ('mail.send', 'calls', 'caller', 10), ('mail.send', 'calls', 'global', 1000),
                     ('llm.chat', 'units', 'caller', 500), ('llm.chat', 'units', 'global', 0)) v(endpoint, metric, scope, value)
        join endpoints e on e.key = v.endpoint`);
    await db.execute(sql`
      insert into budgets (key, name, scope, "window", value, max_value, default_value)
      values ('per-account', 'Per account', 'account', 'utc_day', 2000000, 100000000, 1000000),
             ('everyone', 'Everyone', 'global', 'utc_day', 50000000, 100000000, 1000000)`);
    await db.execute(sql`insert into budget_members (budget_id, endpoint_id) select b.id, e.id from budgets b cross join endpoints e`);
    await db.execute(sql`insert into plans (key, name) values ('pro', 'Pro')`);
    await db.execute(sql`
      insert into accounts (account, plan_id, blocked_at)
      values ('acct-pro', (select id from plans where key = 'pro'), null), ('acct-blocked', null, now()), ('acct-zero', null, null), ('acct-big', null, null)`);
    await db.execute(sql`
      insert into plan_ceiling_values (plan_id, ceiling_id, value)
      select (select id from plans where key = 'pro'), c.id, 40 from ceilings c where c.scope = 'caller'`);
    await db.execute(sql`
      insert into plan_budget_values (plan_id, budget_id, value)
      select (select id from plans where key = 'pro'), b.id, 4000000 from budgets b where b.scope = 'account'`);
    await db.execute(sql`
      insert into ceiling_overrides (ceiling_id, caller, value, reason, created_at)
      select c.id, v.caller, v.value, v.reason, '2026-11-01T00:00:00Z'
        from ceilings c cross join (values ('acct-zero', 0, 'abuse'), ('acct-big', 300, 'ticket 12'), ('acct-pro', 2, 'trial')) v(caller, value, reason)
       where c.scope = 'caller'`);
    await db.execute(sql`
      insert into budget_overrides (budget_id, caller, value, reason, created_at)
      select b.id, v.caller, v.value, v.reason, '2026-11-02T00:00:00Z'
        from budgets b cross join (values ('acct-zero', 0, 'abuse'), ('acct-big', 9000000, 'ticket 12')) v(caller, value, reason)
       where b.scope = 'account'`);

    const callers = ["acct-zero", "acct-big", "acct-pro", "acct-blocked", "acct-new"];
    const answersBefore = await bindings(db, callers);
    const overridesBefore = resultRows(
      await db.execute(sql`
        select 'ceiling' as kind, ceiling_id as id, caller, value::float8, reason, created_at from ceiling_overrides
        union all select 'budget', budget_id, caller, value::float8, reason, created_at from budget_overrides order by 1, 2, 3`),
    );
    expect(overridesBefore).toHaveLength(8);
    const planValuesBefore = resultRows(
      await db.execute(sql`
        select 'ceiling' as kind, ceiling_id as id, plan_id, value::float8, created_at from plan_ceiling_values
        union all select 'budget', budget_id, plan_id, value::float8, created_at from plan_budget_values order by 1, 2, 3`),
    );
    expect(planValuesBefore).toHaveLength(3);
    // Every source a binding can have is in the data: the migration is checked on each.
    expect(new Set(answersBefore.map((b) => b.source))).toEqual(new Set(["blocked", "kill", "override", "plan", "ceiling", "budget"]));

    await migrateDatabase(t.database);

    expect(await bindings(db, callers)).toEqual(answersBefore);
    const overridesAfter = resultRows(
      await db.execute(sql`
        select l.kind, coalesce(c.id, b.id) as id, o.caller, o.value::float8, o.reason, o.created_at
          from limit_overrides o join limits l on l.id = o.limit_id
          left join ceilings c on c.limit_id = l.id left join budgets b on b.limit_id = l.id
         order by 1, 2, 3`),
    );
    expect(overridesAfter).toEqual(overridesBefore);
    const planValuesAfter = resultRows(
      await db.execute(sql`
        select l.kind, coalesce(c.id, b.id) as id, v.plan_id, v.value::float8, v.created_at
          from plan_limit_values v join limits l on l.id = v.limit_id
          left join ceilings c on c.limit_id = l.id left join budgets b on b.limit_id = l.id
         order by 1, 2, 3`),
    );
    expect(planValuesAfter).toEqual(planValuesBefore);
    // One limit per ceiling and per budget, of its kind.
    const kinds = resultRows<{ kind: string; n: number }>(
      await db.execute(sql`
        select l.kind, count(*)::int as n from limits l
         where exists (select 1 from ceilings c where c.limit_id = l.id and l.kind = 'ceiling')
            or exists (select 1 from budgets b where b.limit_id = l.id and l.kind = 'budget')
         group by 1 order by 1`),
    );
    expect(kinds).toEqual([
      { kind: "budget", n: 2 },
      { kind: "ceiling", n: 4 },
    ]);
    expect(resultRows<{ n: number }>(await db.execute(sql`select count(*)::int as n from limits`))[0]?.n).toBe(6);
  });

  it("a ceiling or budget made afterwards has its own limit; deleting one takes its limit and overrides along; a limit id cannot move", async () => {
    const db = t.ownerDb;
    const [made] = resultRows<{ id: number; limit_id: number }>(
      await db.execute(sql`
        insert into ceilings (endpoint_id, metric, scope, "window", value, max_value, default_value)
        select id, 'calls', 'caller', 'billing_month', 7, 100, 7 from endpoints where key = 'mail.send' returning id, limit_id`),
    );
    if (!made) throw new Error("no ceiling made");
    const kind = resultRows<{ kind: string }>(await db.execute(sql`select kind from limits where id = ${made.limit_id}`));
    expect(kind).toEqual([{ kind: "ceiling" }]);
    await db.execute(sql`insert into limit_overrides (limit_id, caller, value, reason) values (${made.limit_id}, 'acct-big', 9, 'r')`);
    await expect(db.execute(sql`update ceilings set limit_id = limit_id + 1000 where id = ${made.id}`)).rejects.toThrow();

    // Deleting the endpoint cascades to its ceilings, and each takes its limit and overrides.
    await db.execute(sql`delete from endpoints where key = 'mail.send'`);
    const left = resultRows<{ limits: number; overrides: number; orphans: number; planValues: number }>(
      await db.execute(sql`
        select (select count(*)::int from limits) as limits, (select count(*)::int from limit_overrides) as overrides,
               (select count(*)::int from plan_limit_values) as "planValues",
               (select count(*)::int from limits l where not exists (select 1 from ceilings c where c.limit_id = l.id)
                                                      and not exists (select 1 from budgets b where b.limit_id = l.id)) as orphans`),
    );
    // Left: llm.chat's two ceilings and the two budgets; llm.chat's per-caller ceiling keeps its 3
    // overrides and 1 plan value, the per-account budget its 2 and 1.
    expect(left).toEqual([{ limits: 4, overrides: 5, orphans: 0, planValues: 2 }]);
  });
});
