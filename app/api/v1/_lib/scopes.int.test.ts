import { readFileSync } from "node:fs";
import path from "node:path";
import { and, count, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { accounts, apiKeys, auditEvents, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { type ApiKeyScope, ApiKeyCache, authenticateApiKey, createApiKey } from "@/lib/api-keys";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { handleAssignPlan, handleAssignPlans, handleGetAccount } from "./accounts-handler";
import { type RunningApiServer, startApiServer } from "./api-server";
import type { ApiDeps } from "./deps";
import { serve } from "./openapi-check";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { handleEndpointStatus } from "./status-handler";
import { apiRequest, chargeSnapshot, makeAccountsKey, makeKey } from "./test-support";

// Keys carry scopes (issue 33): every /api/v1 route checks the one it needs, on the dashboard's
// routes (proxy.ts, then the handler) and on the API server (npm run api) alike; a key without it
// gets 403 insufficient_scope and nothing changes. A key bound to endpoints cannot read or move
// accounts. Keys made before scopes keep only what the docs promised them (migration 0026).

type Body = Record<string, unknown>;
type Answer = { status: number; body: Body; headers: Headers };
const code = (a: { body: Body }) => (a.body.error as { code?: string } | undefined)?.code;
const actor = { type: "system" as const, name: "test" };

describe.skipIf(skipWithoutDatabase())("API key scopes on every route", () => {
  const t = useTestDatabase("api_scopes", { max: 6 });
  const deps: ApiDeps = { db: async () => t.db };
  let endpoint = "";
  let server: RunningApiServer;
  // One key per combination a route may meet.
  const keys: Record<"reserve" | "read" | "write" | "both" | "ownRead", string> = { reserve: "", read: "", write: "", both: "", ownRead: "" };

  beforeAll(async () => {
    endpoint = (await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 1_000 }] })).key;
    // Trusted and bound to an endpoint: the key of the issue, which moved an account to enterprise.
    keys.reserve = (await makeKey(t.db, { endpoints: [endpoint], trusted: true, name: "email service" })).secret;
    keys.read = (await makeAccountsKey(t.db, { name: "reader", scopes: ["accounts:read"] })).secret;
    keys.write = (await makeAccountsKey(t.db, { name: "mover", scopes: ["accounts:write"] })).secret;
    keys.both = (await makeAccountsKey(t.db, { name: "billing" })).secret;
    keys.ownRead = (await makeAccountsKey(t.db, { name: "portal", account: "acct_scoped", scopes: ["accounts:read"] })).secret;
    await t.db.insert(plans).values([
      { key: "pro", name: "Pro" },
      { key: "enterprise", name: "Enterprise" },
    ]);
    server = await startApiServer({ deps, port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await server?.close();
  });

  const planOf = async (account: string) => {
    const [row] = await t.db.select({ key: plans.key }).from(accounts).innerJoin(plans, eq(plans.id, accounts.planId)).where(eq(accounts.account, account));
    return row?.key ?? null;
  };
  const planEvents = async () => (await t.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.action, "account.plan")))[0]?.n ?? 0;

  // Each route as the dashboard serves it (proxy.ts, then the handler) ...
  const routes = {
    put: (key: string, account = "acct_scoped") =>
      serve(apiRequest(`/api/v1/accounts/${account}`, { key, method: "PUT", body: { plan: "enterprise" } }), (r) => handleAssignPlan(r, account, deps)),
    bulk: (key: string) =>
      serve(apiRequest("/api/v1/accounts:bulk", { key, body: { accounts: [{ account: "acct_scoped", plan: "enterprise" }] } }), (r) =>
        handleAssignPlans(r, deps),
      ),
    get: (key: string, account = "acct_scoped") =>
      serve(apiRequest(`/api/v1/accounts/${account}`, { key, method: "GET" }), (r) => handleGetAccount(r, account, deps)),
    reserve: (key: string) =>
      serve(apiRequest("/api/v1/reservations", { key, body: { endpoint, amount: 1, caller: "acct_scoped" } }), (r) => handleReserve(r, deps)),
    settle: (key: string, id: string) =>
      serve(apiRequest(`/api/v1/reservations/${id}/settle`, { key, body: { actual: 1 } }), (r) => handleResolve(r, id, "settle", deps)),
    release: (key: string, id: string) =>
      serve(apiRequest(`/api/v1/reservations/${id}/release`, { key, body: {} }), (r) => handleResolve(r, id, "release", deps)),
    status: (key: string) => serve(apiRequest(`/api/v1/endpoints/${endpoint}`, { key, method: "GET" }), (r) => handleEndpointStatus(r, endpoint, deps)),
  };
  // ... and over HTTP on the API server.
  const overHttp = async (method: string, route: string, key: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${server.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Body, headers: res.headers };
  };
  const refused = (a: Answer, scope: ApiKeyScope) => {
    expect([a.status, code(a)]).toEqual([403, "insufficient_scope"]);
    expect((a.body.error as { message: string }).message).toContain(scope);
    expect(a.headers.get("www-authenticate")).toBe(`Bearer realm="ceilings", error="insufficient_scope", scope="${scope}"`);
  };
  const reservation = async () => {
    const granted = await routes.reserve(keys.reserve);
    expect(granted.status).toBe(201);
    return (granted.body as { reservationId: string }).reservationId;
  };

  it("refuses a key bound to endpoints on every accounts route, on both servers: nothing moves and nothing is read", async () => {
    const before = [await planOf("acct_scoped"), await planEvents()];
    refused((await routes.put(keys.reserve)) as Answer, "accounts:write");
    refused((await routes.bulk(keys.reserve)) as Answer, "accounts:write");
    refused((await routes.get(keys.reserve)) as Answer, "accounts:read");
    refused(await overHttp("PUT", "/api/v1/accounts/acct_scoped", keys.reserve, { plan: "enterprise" }), "accounts:write");
    refused(await overHttp("POST", "/api/v1/accounts:bulk", keys.reserve, { accounts: [{ account: "acct_scoped", plan: "enterprise" }] }), "accounts:write");
    refused(await overHttp("GET", "/api/v1/accounts/acct_scoped", keys.reserve), "accounts:read");
    expect([await planOf("acct_scoped"), await planEvents()]).toEqual(before);
  });

  it("accounts:read reads but does not move; accounts:write moves but does not read; a key with both does both", async () => {
    const before = await planEvents();
    refused((await routes.put(keys.read)) as Answer, "accounts:write");
    refused((await routes.bulk(keys.read)) as Answer, "accounts:write");
    refused(await overHttp("PUT", "/api/v1/accounts/acct_scoped", keys.read, { plan: "enterprise" }), "accounts:write");
    expect(await planEvents()).toBe(before);
    expect((await routes.get(keys.read)).status).toBe(200);
    expect((await overHttp("GET", "/api/v1/accounts/acct_scoped", keys.read)).status).toBe(200);

    refused((await routes.get(keys.write)) as Answer, "accounts:read");
    refused(await overHttp("GET", "/api/v1/accounts/acct_scoped", keys.write), "accounts:read");
    const moved = await routes.put(keys.write);
    expect(moved.status).toBe(200);
    expect(await planOf("acct_scoped")).toBe("enterprise");
    expect((await routes.bulk(keys.write)).status).toBe(200);
    expect((await overHttp("PUT", "/api/v1/accounts/acct_other", keys.write, { plan: "pro" })).status).toBe(200);

    expect((await routes.put(keys.both, "acct_both")).status).toBe(200);
    expect((await routes.get(keys.both, "acct_both")).body).toMatchObject({ plan: { key: "enterprise" } });
  });

  it("a key bound to an account with accounts:read reads its own account only, without who blocked it or why", async () => {
    const own = await routes.get(keys.ownRead);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ planSetBy: null });
    expect(code((await routes.get(keys.ownRead, "acct_other")) as Answer)).toBe("caller_not_allowed");
    refused((await routes.put(keys.ownRead)) as Answer, "accounts:write");
  });

  it("refuses an accounts key on every reserve route, on both servers, and charges nothing; the endpoint key is allowed", async () => {
    const id = await reservation();
    const before = await chargeSnapshot(t.db);
    for (const key of [keys.both, keys.read, keys.write]) {
      refused((await routes.reserve(key)) as Answer, "reserve");
      refused((await routes.settle(key, id)) as Answer, "reserve");
      refused((await routes.release(key, id)) as Answer, "reserve");
      refused((await routes.status(key)) as Answer, "reserve");
    }
    refused(await overHttp("POST", "/api/v1/reservations", keys.both, { endpoint, amount: 1, caller: "acct_scoped" }), "reserve");
    refused(await overHttp("POST", `/api/v1/reservations/${id}/settle`, keys.both, { actual: 1 }), "reserve");
    refused(await overHttp("POST", `/api/v1/reservations/${id}/release`, keys.both, {}), "reserve");
    refused(await overHttp("GET", `/api/v1/endpoints/${endpoint}`, keys.both), "reserve");
    expect(await chargeSnapshot(t.db)).toBe(before);

    expect((await routes.settle(keys.reserve, id)).status).toBe(200);
    expect((await routes.release(keys.reserve, await reservation())).status).toBe(200);
    expect((await routes.status(keys.reserve)).status).toBe(200);
    expect((await overHttp("POST", "/api/v1/reservations", keys.reserve, { endpoint, amount: 1, caller: "acct_scoped" })).status).toBe(201);
  });

  it("creation takes scopes, zod-parsed: an unknown scope, endpoints with accounts scopes, and accounts:write on an account key are refused", async () => {
    const [{ n: before } = { n: 0 }] = await t.db.select({ n: count() }).from(apiKeys);
    const make = (binding: { kind: "trusted" } | { kind: "account"; account: string }, scopes: string[], endpointKeys: string[]) =>
      createApiKey(t.db, { name: "bad", binding, scopes, endpointKeys, actor });
    const cases: [Promise<unknown>, string][] = [
      [
        make({ kind: "trusted" }, ["reserve", "accounts:admin"], [endpoint]),
        "unknown scope 'accounts:admin': a key's scopes are reserve, accounts:read, accounts:write",
      ],
      [make({ kind: "trusted" }, ["reserve", "accounts:write"], [endpoint]), "a key bound to endpoints cannot read or move accounts"],
      [make({ kind: "trusted" }, ["accounts:read"], [endpoint]), "a key for accounts has no endpoints"],
      [make({ kind: "trusted" }, ["reserve"], []), "choose at least one endpoint"],
      [make({ kind: "trusted" }, [], []), "choose at least one scope"],
      [make({ kind: "account", account: "acct_x" }, ["accounts:write"], []), "only a trusted-service key may have accounts:write"],
    ];
    for (const [attempt, message] of cases) await expect(attempt).rejects.toThrow(message);
    const [{ n: after } = { n: 0 }] = await t.db.select({ n: count() }).from(apiKeys);
    expect(after).toBe(before);
    const made = await createApiKey(t.db, {
      name: "billing 2",
      binding: { kind: "trusted" },
      scopes: ["accounts:write", "accounts:read", "accounts:read"],
      endpointKeys: [],
      actor,
    });
    expect(made.key.scopes).toEqual(["accounts:read", "accounts:write"]);
    const [audit] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "api_key.create"), sql`${auditEvents.details}->>'apiKeyId' = ${String(made.key.id)}`));
    expect(audit?.details).toMatchObject({ scopes: ["accounts:read", "accounts:write"], endpointKeys: [] });
  });

  it("the database holds the same rules: a row written by hand cannot combine endpoints with accounts scopes", async () => {
    const insert = (scopes: string, endpointKeys: string, trusted = true) =>
      t.db.execute(sql`insert into api_keys (name, prefix, secret_hash, account, trusted, endpoint_keys, scopes, created_by)
        values ('by hand', 'byhand00', md5(random()::text), ${trusted ? null : "acct_h"}, ${trusted}, ${endpointKeys}::text[], ${scopes}::text[], 'sql')`);
    const check = async (scopes: string, endpointKeys: string, constraint: string, trusted = true) => {
      const error = await insert(scopes, endpointKeys, trusted).then(
        () => null,
        (e: unknown) => e,
      );
      expect(String((error as { cause?: unknown } | null)?.cause ?? error)).toContain(constraint);
    };
    await check(`{reserve,accounts:write}`, `{${endpoint}}`, "api_keys_scopes_endpoints");
    await check(`{accounts:read}`, `{${endpoint}}`, "api_keys_scopes_endpoints");
    await check(`{reserve}`, `{}`, "api_keys_scopes_endpoints");
    await check(`{accounts:admin}`, `{}`, "api_keys_scopes_known");
    await check(`{}`, `{}`, "api_keys_scopes_known");
    await check(`{accounts:write}`, `{}`, "api_keys_scopes_write_trusted", false);
  });

  it("a change of scopes alone empties the key cache (the notify trigger lists scopes)", async () => {
    const cache = await ApiKeyCache.start(t.db);
    try {
      const key = await makeAccountsKey(t.db, { name: "cached" });
      const auth = () => authenticateApiKey(t.db, `Bearer ${key.secret}`, new Date(), cache);
      const deadline = performance.now() + 5_000;
      while (!cache.trusted && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(cache.trusted).toBe(true);
      expect(await auth()).toMatchObject({ ok: true, principal: { scopes: ["accounts:read", "accounts:write"] } });
      const hits = cache.stats.hits;
      expect(await auth()).toMatchObject({ ok: true });
      expect(cache.stats.hits).toBe(hits + 1);
      await t.db
        .update(apiKeys)
        .set({ scopes: ["accounts:read"] })
        .where(eq(apiKeys.id, key.id));
      await new Promise((r) => setTimeout(r, 300));
      expect(await auth()).toMatchObject({ ok: true, principal: { scopes: ["accounts:read"] } });
    } finally {
      await cache.close();
    }
  });
});

describe.skipIf(skipWithoutDatabase())("migration 0026's backfill of API key scopes", () => {
  const t = useTestDatabase("api_scopes_backfill", { max: 2 });

  /** The statements of the "api key scopes" section of migration 0026, as the migrator runs them. */
  function sectionStatements(): string[] {
    const file = readFileSync(path.join(process.cwd(), "db/migrations/0026_change_control_independence.sql"), "utf8");
    const start = file.indexOf("-- section: api key scopes");
    const next = file.indexOf("-- section:", start + 1);
    expect(start).toBeGreaterThan(0);
    return file
      .slice(start, next === -1 ? file.length : next)
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter((s) => s.split("\n").some((line) => line.trim() !== "" && !line.trim().startsWith("--")));
  }

  it("gives a key bound to endpoints reserve only, a trusted key with no endpoint (the billing service) accounts:read and accounts:write, an account key with no endpoint accounts:read", async () => {
    const e = (await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] })).key;
    // The table as it was before 0026: no scopes, the trigger of 0015.
    await t.ownerDb.execute(
      sql.raw(`DROP TRIGGER api_keys_changed ON api_keys;
      ALTER TABLE api_keys DROP COLUMN scopes;
      CREATE TRIGGER api_keys_changed AFTER INSERT OR DELETE OR UPDATE OF name, prefix, secret_hash, account, trusted, endpoint_keys, revoked_at ON api_keys
      FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed();`),
    );
    const rows: [string, string | null, boolean, string[]][] = [
      ["trusted on an endpoint (the issue's email.subscribe key)", null, true, [e]],
      ["account on an endpoint", "acct_1", false, [e]],
      ["billing service", null, true, []],
      ["account reader", "acct_2", false, []],
    ];
    for (const [name, account, trusted, endpointKeys] of rows) {
      await t.db.execute(sql`insert into api_keys (name, prefix, secret_hash, account, trusted, endpoint_keys, created_by)
        values (${name}, 'old00000', md5(${name}), ${account}, ${trusted}, ${`{${endpointKeys.join(",")}}`}::text[], 'before')`);
    }
    // As the migrator runs them: the owner, one statement at a time.
    for (const statement of sectionStatements()) await t.ownerDb.execute(sql.raw(statement));
    const after = resultRows<{ name: string; scopes: string[] }>(await t.db.execute(sql`select name, scopes from api_keys order by id`));
    expect(after).toEqual([
      { name: "trusted on an endpoint (the issue's email.subscribe key)", scopes: ["reserve"] },
      { name: "account on an endpoint", scopes: ["reserve"] },
      { name: "billing service", scopes: ["accounts:read", "accounts:write"] },
      { name: "account reader", scopes: ["accounts:read"] },
    ]);
    const trigger = resultRows<{ def: string }>(
      await t.db.execute(sql`select pg_get_triggerdef(oid) as def from pg_trigger where tgname = 'api_keys_changed'`),
    );
    expect(trigger[0]?.def).toContain("scopes");
  });
});
