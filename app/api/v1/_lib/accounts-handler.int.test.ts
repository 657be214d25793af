import { and, count, eq, like, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts, auditEvents, plans } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { blockAccount } from "@/lib/accounts";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { handleAssignPlan, handleAssignPlans, handleGetAccount } from "./accounts-handler";
import { type RunningApiServer, startApiServer } from "./api-server";
import type { ApiDeps } from "./deps";
import { serve } from "./openapi-check";
import { apiRequest, makeAccountsKey, makeKey, type Send } from "./test-support";

// The accounts routes on real Postgres, through proxy.ts and the handlers as the dashboard's server
// runs them, and over HTTP on the API server (npm run api): only a trusted key with accounts:write
// assigns, a key that spends on endpoints gets 403 and changes nothing (scopes.int.test.ts has
// every scope on every route), strict JSON, a bulk body all or nothing with its bad
// rows named, 10,001 rows refused, and the bulk body's larger size limit on both servers.

type Body = Record<string, unknown>;

describe.skipIf(skipWithoutDatabase())("the accounts routes", () => {
  const t = useTestDatabase("accounts_api", { max: 6 });
  const deps: ApiDeps = { db: async () => t.db };
  let trusted = "";
  let trustedPrefix = "";
  let bound = "";
  let ownReader = "";
  let server: RunningApiServer;

  beforeAll(async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 10 }] });
    trusted = (await makeAccountsKey(t.db, { name: "billing" })).secret;
    trustedPrefix = trusted.split("_")[1] ?? "";
    bound = (await makeKey(t.db, { endpoints: [e.key], account: "acct_owner" })).secret;
    ownReader = (await makeAccountsKey(t.db, { name: "portal", account: "acct_owner", scopes: ["accounts:read"] })).secret;
    await t.db.insert(plans).values([
      { key: "free", name: "Free" },
      { key: "pro", name: "Pro" },
    ]);
    server = await startApiServer({ deps, port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await server?.close();
  });

  const put = async (account: string, send: Send) => {
    const a = await serve(apiRequest(`/api/v1/accounts/${encodeURIComponent(account)}`, { ...send, method: "PUT" }), (r) => handleAssignPlan(r, account, deps));
    return a as { status: number; body: Body };
  };
  const bulk = async (send: Send) =>
    (await serve(apiRequest("/api/v1/accounts:bulk", send), (r) => handleAssignPlans(r, deps))) as { status: number; body: Body };
  const get = async (account: string, key: string) =>
    (await serve(apiRequest(`/api/v1/accounts/${encodeURIComponent(account)}`, { key, method: "GET" }), (r) => handleGetAccount(r, account, deps))) as {
      status: number;
      body: Body;
    };
  const code = (a: { body: Body }) => (a.body.error as { code?: string } | undefined)?.code;
  const planOf = async (account: string) => {
    const [row] = await t.db.select({ key: plans.key }).from(accounts).innerJoin(plans, eq(plans.id, accounts.planId)).where(eq(accounts.account, account));
    return row?.key ?? null;
  };
  const planEvents = async () => (await t.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.action, "account.plan")))[0]?.n ?? 0;

  it("a key bound to an account gets 403 and changes nothing, even for its own account; a trusted accounts key assigns, audited with the key", async () => {
    const before = await planEvents();
    for (const account of ["acct_owner", "acct_other"]) {
      const refused = await put(account, { key: bound, body: { plan: "pro" } });
      expect([refused.status, code(refused)]).toEqual([403, "insufficient_scope"]);
    }
    const refusedBulk = await bulk({ key: bound, body: { accounts: [{ account: "acct_owner", plan: "pro" }] } });
    expect([refusedBulk.status, code(refusedBulk)]).toEqual([403, "insufficient_scope"]);
    const readerPut = await put("acct_owner", { key: ownReader, body: { plan: "pro" } });
    expect([readerPut.status, code(readerPut)]).toEqual([403, "insufficient_scope"]);
    expect([await planOf("acct_owner"), await planOf("acct_other"), await planEvents()]).toEqual([null, null, before]);

    const done = await put("acct_owner", { key: trusted, body: { plan: "pro" } });
    expect([done.status, done.body]).toEqual([200, { account: "acct_owner", plan: "pro", previous: "default", previousWasDefault: true, changed: true }]);
    expect(await planOf("acct_owner")).toBe("pro");
    const [event] = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "account.plan"), eq(auditEvents.target, "acct_owner")));
    expect(event).toMatchObject({ actorType: "api_key", actor: `ck_${trustedPrefix} (billing)` });
    const retry = await put("acct_owner", { key: trusted, body: { plan: "pro" } });
    expect([retry.status, retry.body.changed]).toEqual([200, false]);
  });

  it("refuses duplicate keys, unknown fields, an account with a control character or of 300 characters, and an unknown plan: nothing changes", async () => {
    const cases: [string, Send, string][] = [
      ["acct_strict", { raw: '{"plan":"free","plan":"pro"}' }, "duplicate_field"],
      ["acct_strict", { body: { plan: "pro", account: "acct_x" } }, "unknown_field"],
      ["acct_strict", { body: { plan: "platinum" } }, "unknown_plan"],
      ["acct_strict", { body: { plan: "Pro Plan" } }, "invalid_input"],
      ["a".repeat(300), { body: { plan: "pro" } }, "invalid_input"],
      ["acct\u0001ctl", { body: { plan: "pro" } }, "invalid_input"],
    ];
    for (const [account, send, want] of cases) {
      const answer = await put(account, { key: trusted, ...send });
      expect([answer.status, code(answer)]).toEqual([400, want]);
    }
    expect(await t.db.select().from(accounts).where(like(accounts.account, "acct_strict%"))).toEqual([]);
    expect(await t.db.select().from(accounts).where(like(accounts.account, "aaaa%"))).toEqual([]);
  });

  it("a bulk body with one bad row assigns nothing and names the row; 10,001 rows are refused before anything is read", async () => {
    const rows = Array.from({ length: 20 }, (_, i) => ({ account: `acct_bulk_${i}`, plan: "pro" }));
    const bad = [
      ...rows.slice(0, 7),
      { account: "x".repeat(300), plan: "pro" },
      ...rows.slice(7),
      { account: "acct_bulk_3", plan: "free" },
      { account: "acct_z", plan: "gold" },
    ];
    const answer = await bulk({ key: trusted, body: { accounts: bad } });
    expect([answer.status, code(answer), answer.body.refused]).toEqual([400, "invalid_rows", 3]);
    expect((answer.body.rows as { index: number; code: string }[]).map((r) => [r.index, r.code])).toEqual([
      [7, "invalid_input"],
      [21, "duplicate_account"],
      [22, "unknown_plan"],
    ]);
    expect(await t.db.select().from(accounts).where(like(accounts.account, "acct_bulk_%"))).toEqual([]);

    const shape = await bulk({
      key: trusted,
      body: { accounts: [...rows.slice(0, 2), { account: "acct_q" }, 7, { account: "acct_r", plan: "pro", note: "x" }] },
    });
    expect([shape.status, code(shape)]).toEqual([400, "invalid_rows"]);
    expect((shape.body.rows as { index: number; code: string }[]).map((r) => [r.index, r.code])).toEqual([
      [2, "invalid_input"],
      [3, "invalid_input"],
      [4, "unknown_field"],
    ]);

    const many = await bulk({ key: trusted, body: { accounts: Array.from({ length: 10_001 }, (_, i) => ({ account: `acct_bulk_${i}`, plan: "pro" })) } });
    expect([many.status, code(many)]).toEqual([400, "too_many"]);
    expect(await t.db.select().from(accounts).where(like(accounts.account, "acct_bulk_%"))).toEqual([]);
    const rejected = await t.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.action, "account.rejected"), sql`${auditEvents.details}->>'rows' = '10001'`));
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({ actorType: "api_key", details: { error: "at most 10000 accounts at once, got 10001: nothing was assigned" } });

    const ok = await bulk({ key: trusted, body: { accounts: rows } });
    expect([ok.status, ok.body.assigned, ok.body.unchanged]).toEqual([200, 20, 0]);
    expect(await planOf("acct_bulk_19")).toBe("pro");
  });

  it("GET shows a trusted accounts key any account and a key bound to an account only its own, without who on staff blocked it or why", async () => {
    await blockAccount(t.db, { account: "acct_owner", actor: { type: "staff", email: "ops@example.com" }, reason: "card fraud" });
    const staffView = await get("acct_owner", trusted);
    expect(staffView.body).toMatchObject({ plan: { key: "pro" }, planAssigned: true, blocked: { by: "ops@example.com", reason: "card fraud" } });
    expect((staffView.body.ceilings as unknown[]).length).toBe(1);
    const own = await get("acct_owner", ownReader);
    expect(own.body).toMatchObject({ plan: { key: "pro" }, planSetBy: null, blocked: { by: null, reason: null } });
    expect(code(await get("acct_other", ownReader))).toBe("caller_not_allowed");
    expect(code(await get("acct_owner", bound))).toBe("insufficient_scope");
  });

  it("over HTTP on the API server: accounts:bulk takes a body past 16 KiB, up to 4 MiB; PUT and GET route by the path", async () => {
    const send = (method: string, path: string, body?: unknown, key = trusted) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const rows = Array.from({ length: 2_000 }, (_, i) => ({ account: `acct_http_${String(i).padStart(5, "0")}`, plan: "free" }));
    expect(JSON.stringify({ accounts: rows }).length).toBeGreaterThan(16 * 1024);
    const big = await send("POST", "/api/v1/accounts:bulk", { accounts: rows });
    expect([big.status, ((await big.json()) as Body).assigned]).toEqual([200, 2_000]);
    const huge = await send("POST", "/api/v1/accounts:bulk", { accounts: [{ account: "a", plan: "p".repeat(4 * 1024 * 1024) }] });
    expect([huge.status, (((await huge.json()) as Body).error as Body).code]).toEqual([413, "body_too_large"]);
    // The other routes keep 16 KiB.
    const padded = await send("PUT", "/api/v1/accounts/acct_http_00001", { plan: "p".repeat(17_000) });
    expect(padded.status).toBe(413);
    const one = await send("PUT", `/api/v1/accounts/${encodeURIComponent("acct http/1")}`, { plan: "pro" });
    expect([one.status, ((await one.json()) as Body).account]).toEqual([200, "acct http/1"]);
    const read = await send("GET", `/api/v1/accounts/${encodeURIComponent("acct http/1")}`);
    expect(((await read.json()) as Body).plan).toEqual({ key: "pro", name: "Pro" });
    expect((await send("DELETE", "/api/v1/accounts/acct_http_00001")).status).toBe(405);
  });

  it("logs a body refused at the boundary as account.rejected, and trims a bulk row's account as a caller is trimmed", async () => {
    const rejected = async () => (await t.db.select({ n: count() }).from(auditEvents).where(eq(auditEvents.action, "account.rejected")))[0]?.n ?? 0;
    const before = await rejected();
    expect(code(await put("acct_shape", { key: trusted, body: { plan: 5 } }))).toBe("invalid_input");
    expect(code(await put("acct_shape", { key: trusted, raw: "{" }))).toBe("invalid_json");
    expect(code(await bulk({ key: trusted, body: { accounts: [{ account: "acct_a" }] } }))).toBe("invalid_rows");
    expect(await rejected()).toBe(before + 3);
    // \v, \f and U+0085 at an edge are whitespace to canonical_caller: the row names acct_trimmed.
    const trimmed = await bulk({
      key: trusted,
      body: {
        accounts: [
          { account: "acct_trimmed\u000b", plan: "pro" },
          { account: "\u0085acct_trimmed2\u000c", plan: "pro" },
        ],
      },
    });
    expect(trimmed.status).toBe(200);
    expect([await planOf("acct_trimmed"), await planOf("acct_trimmed2")]).toEqual(["pro", "pro"]);
  });

  it("shows a key bound to the account, which has no endpoint since scopes, no ceiling or budget; a trusted accounts key sees them all", async () => {
    const hidden = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 777 }] });
    const seen = await get("acct_owner", ownReader);
    expect([seen.status, seen.body.ceilings, seen.body.budgets]).toEqual([200, [], []]);
    const all = (await get("acct_owner", trusted)).body.ceilings as { endpoint: string }[];
    expect(all.map((c) => c.endpoint)).toContain(hidden.key);
  });
});
