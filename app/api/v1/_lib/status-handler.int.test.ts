import { describe, expect, it } from "vitest";

import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeBudget, priceEndpoint, setBudgetValue } from "@/lib/enforcement/budget-fixtures";
import { assignAccount, makePlan, setBlocked, setPlanBudgetValue, setPlanCeilingValue } from "@/lib/enforcement/plan-fixtures";
import { makeEndpoint, setCeilingValue } from "@/lib/enforcement/test-fixtures";
import type { ApiDeps } from "./deps";
import { schemaAt } from "./openapi-check";
import { handleReserve } from "./reserve-handler";
import { handleEndpointStatus } from "./status-handler";
import { apiRequest, errorCode, makeKey, read } from "./test-support";
import { insertOverride } from "@/lib/limits/test-fixtures";

describe.skipIf(skipWithoutDatabase())("GET /api/v1/endpoints/{key} on real Postgres", () => {
  const t = useTestDatabase("api_status", { max: 6 });
  const deps: ApiDeps = { db: async () => t.db };
  const status = async (key: string | null, endpointKey: string, query = "") =>
    read(await handleEndpointStatus(apiRequest(`/api/v1/endpoints/${endpointKey}${query}`, { key, method: "GET" }), endpointKey, deps));

  it("lists the budgets the endpoint belongs to, in money, with what binds the account asked about", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000 }] });
    await priceEndpoint(t.db, e.endpointId, { units: 2_000_000 });
    const global = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 500 });
    const perAccount = await makeBudget(t.db, { endpointIds: [e.endpointId], value: 100, scope: "account" });
    const a = await makeKey(t.db, { endpoints: [e.key], account: "acct_budget_a" });
    const service = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    const plan = await makePlan(t.db, "budgeted");
    await setPlanBudgetValue(t.db, plan.id, perAccount.id, 60);
    await assignAccount(t.db, "acct_budget_a", plan.id);
    // 7 units at 2 micros each: 14 micros held on both budgets.
    expect((await read(await handleReserve(apiRequest("/api/v1/reservations", { key: a.secret, body: { endpoint: e.key, amount: 7 } }), deps))).status).toBe(
      201,
    );
    const forA = await status(a.secret, e.key);
    expect(forA.status).toBe(200);
    expect(forA.body.budgets).toEqual([
      expect.objectContaining({
        budgetId: global.id,
        budget: global.key,
        currency: "USD",
        scope: "global",
        value: 500,
        source: "budget",
        held: 14,
        settled: 0,
        used: 14,
        remaining: 486,
        killed: false,
      }),
      expect.objectContaining({ budgetId: perAccount.id, scope: "account", value: 60, source: "plan", held: 14, used: 14, remaining: 46 }),
    ]);
    const documented = schemaAt("components", "schemas", "EndpointStatus");
    expect(documented(forA.body), JSON.stringify(documented.errors)).toBe(true);
    // A trusted service without ?caller= sees the per-account budget's own value and no counters.
    const bare = (await status(service.secret, e.key)).body.budgets as Record<string, unknown>[];
    expect(bare[1]).toMatchObject({ value: 100, source: "budget", held: null, used: null, remaining: null });
    expect((await status(service.secret, e.key, "?caller=acct_budget_a")).body.budgets).toEqual(forA.body.budgets);
    // Killed: 0 binds every account.
    await setBudgetValue(t.db, global.id, 0);
    expect(((await status(a.secret, e.key)).body.budgets as Record<string, unknown>[])[0]).toMatchObject({
      value: 0,
      source: "kill",
      killed: true,
      remaining: 0,
    });
  });

  it("reports each ceiling's value, used, held and remaining in its window, per-caller ones for the key's own account", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 100 },
        { metric: "units", scope: "caller", window: "billing_month", value: 20 },
        { metric: "calls", scope: "destination", window: "first_hit", value: 1, windowSeconds: 86_400 },
      ],
    });
    const a = await makeKey(t.db, { endpoints: [e.key], account: "acct_a" });
    const b = await makeKey(t.db, { endpoints: [e.key], account: "acct_b" });
    const service = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    await insertOverride(t.db, "ceiling", e.ceilingIds[1] ?? 0, { caller: "acct_b", value: 5, reason: "test" });
    const granted = await read(
      await handleReserve(apiRequest("/api/v1/reservations", { key: a.secret, body: { endpoint: e.key, amount: 7, destination: "x@example.com" } }), deps),
    );
    expect(granted.status).toBe(201);

    const forA = await status(a.secret, e.key);
    expect(forA.status).toBe(200);
    expect(forA.body).toMatchObject({ endpoint: { key: e.key }, account: "acct_a", killed: false });
    const [global, perCaller, cooldown] = forA.body.ceilings as Record<string, unknown>[];
    const dayStart = new Date();
    dayStart.setUTCHours(0, 0, 0, 0);
    expect(global).toMatchObject({ scope: "global", metric: "units", value: 100, held: 7, settled: 0, used: 7, remaining: 93, killed: false });
    expect(global?.window).toEqual({
      kind: "utc_day",
      start: dayStart.toISOString(),
      end: new Date(dayStart.getTime() + 86_400_000).toISOString(),
      seconds: null,
    });
    expect(perCaller).toMatchObject({ scope: "caller", value: 20, override: false, used: 7, remaining: 13 });
    expect(cooldown).toMatchObject({ scope: "destination", value: 1, used: null, window: { kind: "first_hit", seconds: 86_400 } });

    expect(forA.body).toMatchObject({ plan: "default", blocked: false });
    expect(perCaller).toMatchObject({ source: "ceiling" });
    const forB = (await status(b.secret, e.key)).body.ceilings as Record<string, unknown>[];
    expect(forB[1]).toMatchObject({ value: 5, override: true, source: "override", used: 0, remaining: 5 });
    // On a plan: the plan's value binds and is named; blocked: 0, whatever binds otherwise.
    const pro = await makePlan(t.db, "pro");
    await setPlanCeilingValue(t.db, pro.id, e.ceilingIds[1] ?? 0, 15);
    await assignAccount(t.db, "acct_a", pro.id);
    const onPro = await status(a.secret, e.key);
    expect(onPro.body).toMatchObject({ plan: pro.key, blocked: false });
    expect((onPro.body.ceilings as Record<string, unknown>[])[1]).toMatchObject({ value: 15, source: "plan", override: false, used: 7, remaining: 8 });
    await setBlocked(t.db, "acct_a", true);
    const blocked = await status(a.secret, e.key);
    expect(blocked.body).toMatchObject({ blocked: true });
    expect((blocked.body.ceilings as Record<string, unknown>[])[1]).toMatchObject({ value: 0, source: "blocked", remaining: 0 });
    await setBlocked(t.db, "acct_a", false);
    const serviceAll = (await status(service.secret, e.key)).body.ceilings as Record<string, unknown>[];
    expect(serviceAll[1]).toMatchObject({ used: null, remaining: null });
    const serviceForA = (await status(service.secret, e.key, "?caller=acct_a")).body.ceilings as Record<string, unknown>[];
    expect(serviceForA[1]).toMatchObject({ used: 7 });
    const peek = await status(a.secret, e.key, "?caller=acct_b");
    expect([peek.status, errorCode(peek)]).toEqual([403, "caller_not_allowed"]);

    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 0);
    const killed = await status(a.secret, e.key);
    expect(killed.body).toMatchObject({ killed: true });
    expect((killed.body.ceilings as Record<string, unknown>[])[0]).toMatchObject({ killed: true, remaining: 0 });
  });

  it("answers 401 without a key, 403 for an endpoint the key may not use, 404 for an unknown one", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const key = await makeKey(t.db, { endpoints: [e.key] });
    expect(errorCode(await status(null, e.key))).toBe("missing_api_key");
    const denied = await status(key.secret, other.key);
    expect([denied.status, errorCode(denied)]).toEqual([403, "endpoint_not_allowed"]);
    const unknown = await status(key.secret, "no.such");
    expect([unknown.status, errorCode(unknown)]).toEqual([404, "unknown_endpoint"]);
  });
});
