import { SilentHost } from "@/db/silent-host";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, type Database } from "@/db/client";
import { plans, reservations } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import type { ApiDeps } from "@/app/api/v1/_lib/deps";
import { makeAccountsKey, makeKey } from "@/app/api/v1/_lib/test-support";
import { type RunningApiServer, startApiServer } from "@/app/api/v1/_lib/api-server";
import { MAX_BODY_BYTES } from "@/lib/http";
import { budgetUsage, makeBudget, priceEndpoint } from "@/lib/enforcement/budget-fixtures";
import { counterTotals, makeEndpoint, setCeilingValue } from "@/lib/enforcement/test-fixtures";
import { AuthenticationError, ConflictError, createCeilingsClient, ForbiddenError, InvalidRequestError, NotFoundError, PayloadTooLargeError } from "./index";

// The client against the real /api/v1 handlers on a loopback HTTP server and real Postgres. A
// dead database (a closed port) makes the server answer 503 exactly as in production.

describe.skipIf(skipWithoutDatabase())("the Ceilings client over HTTP", () => {
  const t = useTestDatabase("client", { max: 6 });
  let dead: Database;
  let api: RunningApiServer;
  /** Every request as it arrived at the API server, in order. */
  const seen: { method: string; path: string; body: string }[] = [];
  /** How many of the next requests get the dead database (and so a 503). */
  let failNext = 0;
  let endpoint: Awaited<ReturnType<typeof makeEndpoint>>;
  let other: Awaited<ReturnType<typeof makeEndpoint>>;
  let secret: string;

  beforeAll(async () => {
    dead = openPostgres("postgres://postgres@127.0.0.1:9/nowhere", { max: 1, connectTimeoutSeconds: 1 });
    // The handlers open the database once per request: the next failNext requests get a dead one.
    const deps: ApiDeps = {
      db: async () => {
        if (failNext > 0) {
          failNext--;
          return dead.db;
        }
        return t.db;
      },
    };
    api = await startApiServer({ deps, port: 0, host: "127.0.0.1", observe: (r) => seen.push(r) });
    endpoint = await makeEndpoint(t.db, {
      perCallMax: 50,
      ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }],
    });
    other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    secret = (await makeKey(t.db, { endpoints: [endpoint.key], account: "acct_client" })).secret;
  });
  afterAll(async () => {
    await api?.close();
    await dead?.close();
  });

  const client = (extra: Partial<Parameters<typeof createCeilingsClient>[0]> = {}) =>
    createCeilingsClient({ baseUrl: api.url, apiKey: secret, deadlineMs: 5000, retryDelayMs: 10, ...extra });
  // The server reads a body only up to one byte past its limit (the 413 case is cut short).
  const reserveBodies = () =>
    seen.filter((r) => r.path === "/api/v1/reservations" && r.body.length <= MAX_BODY_BYTES).map((r) => JSON.parse(r.body) as Record<string, unknown>);

  it("reserves, settles and replays; a key is generated per call, so two calls are two reservations", async () => {
    const c = client();
    const one = await c.reserve({ endpoint: endpoint.key, amount: 10 });
    const two = await c.reserve({ endpoint: endpoint.key, amount: 10 });
    if (one.status !== "granted" || two.status !== "granted") throw new Error(`not granted: ${JSON.stringify([one, two])}`);
    expect(one.idempotencyKey).not.toEqual(two.idempotencyKey);
    expect(one.reservationId).not.toEqual(two.reservationId);
    expect(one.remaining).toEqual([expect.objectContaining({ ceilingId: endpoint.ceilingIds[0], limit: 100, used: 10, remaining: 90 })]);
    const replay = await c.reserve({ endpoint: endpoint.key, amount: 10, idempotencyKey: one.idempotencyKey });
    expect(replay).toMatchObject({ status: "granted", replay: true, reservationId: one.reservationId });
    expect(await c.settle(one.reservationId, 4)).toEqual({ status: "settled", reservationId: one.reservationId, actual: 4, overrun: false, replay: false });
    expect(await c.settle(one.reservationId, 4)).toMatchObject({ status: "settled", replay: true });
    expect(await c.release(two.reservationId)).toEqual({ status: "released", reservationId: two.reservationId, replay: false });
    expect(await c.release(two.reservationId)).toMatchObject({ status: "released", replay: true });
    expect(await counterTotals(t.db, endpoint.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 4 });
  });

  it("returns refusals as answers naming the gate", async () => {
    const c = client();
    expect(await c.reserve({ endpoint: endpoint.key, amount: 51 })).toMatchObject({ status: "refused", gate: "per_call_max" });
    const ceilingId = endpoint.ceilingIds[0] ?? 0;
    await setCeilingValue(t.db, ceilingId, 0);
    try {
      expect(await c.reserve({ endpoint: endpoint.key, amount: 1 })).toMatchObject({ status: "refused", gate: "kill_switch" });
    } finally {
      await setCeilingValue(t.db, ceilingId, 100);
    }
    const status = await c.endpointStatus(endpoint.key);
    expect(status).toMatchObject({ status: "ok", killed: false, ceilings: [{ ceilingId, value: 100 }] });
  });

  it("reserves and settles part by part, and names the budget that refuses", async () => {
    const llm = await makeEndpoint(t.db, { perCallMax: 100_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    await priceEndpoint(t.db, llm.endpointId, { input: 2_500_000, output: 10_000_000 });
    const budget = await makeBudget(t.db, { endpointIds: [llm.endpointId], value: 20_000 });
    const c = createCeilingsClient({
      baseUrl: api.url,
      apiKey: (await makeKey(t.db, { endpoints: [llm.key], account: "acct_parts" })).secret,
      deadlineMs: 5000,
    });
    // 1,200 input and 800 output tokens: $0.011 of the $0.02 budget.
    const grant = await c.reserve({ endpoint: llm.key, parts: { input: 1200, output: 800 } });
    if (grant.status !== "granted") throw new Error(`not granted: ${JSON.stringify(grant)}`);
    expect(grant.remaining).toContainEqual(
      expect.objectContaining({ budgetId: budget.id, budget: budget.key, metric: "money", currency: "USD", limit: 20_000, used: 11_000, remaining: 9_000 }),
    );
    expect(await c.reserve({ endpoint: llm.key, parts: { input: 1200, output: 800 } })).toMatchObject({
      status: "refused",
      gate: "budget",
      budgetId: budget.id,
      budget: budget.key,
      currency: "USD",
      cost: 11_000,
      remaining: 9_000,
    });
    expect(await c.settle(grant.reservationId, { input: 1180, output: 412 })).toMatchObject({ status: "settled", actual: 1592, overrun: false });
    expect(await budgetUsage(t.db, budget.id)).toEqual({ held: 0, settled: 7_070 });
    await expect(c.reserve({ endpoint: llm.key, amount: 10 })).rejects.toMatchObject({ status: 400, code: "invalid_parts" });
  });

  it("throws a typed error for every kind of 4xx", async () => {
    const c = client();
    const granted = await c.reserve({ endpoint: endpoint.key, amount: 1, idempotencyKey: "typed-1" });
    if (granted.status !== "granted") throw new Error("not granted");
    await c.release(granted.reservationId);
    const cases: [() => Promise<unknown>, new (...a: never[]) => Error, string][] = [
      [() => c.reserve({ endpoint: endpoint.key, amount: 1.5 }), InvalidRequestError, "invalid_amount"],
      [
        () => createCeilingsClient({ baseUrl: api.url, apiKey: "ck_nope" }).reserve({ endpoint: endpoint.key, amount: 1 }),
        AuthenticationError,
        "invalid_api_key",
      ],
      [() => c.reserve({ endpoint: other.key, amount: 1 }), ForbiddenError, "endpoint_not_allowed"],
      [() => c.reserve({ endpoint: "no.such", amount: 1 }), NotFoundError, "unknown_endpoint"],
      [() => c.reserve({ endpoint: endpoint.key, amount: 2, idempotencyKey: "typed-1" }), ConflictError, "idempotency_conflict"],
      [() => c.settle(granted.reservationId, 1), ConflictError, "already_resolved"],
      [() => c.settle("00000000-0000-4000-8000-000000000000", 1), NotFoundError, "reservation_not_found"],
      [() => c.reserve({ endpoint: endpoint.key, amount: 1, destination: "x".repeat(17_000) }), PayloadTooLargeError, "body_too_large"],
    ];
    for (const [promise, kind, code] of cases) {
      const error = await promise().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, code).toBeInstanceOf(kind);
      expect(error).toMatchObject({ code });
    }
    const resolved = await c.settle(granted.reservationId, 1).catch((e: unknown) => e);
    expect(resolved instanceof ConflictError && resolved.state).toBe("released");
  });

  it("retries a 503 with the same idempotency key, and one reservation is made", async () => {
    const before = seen.length;
    failNext = 2;
    const decision = await client().reserve({ endpoint: endpoint.key, amount: 3 });
    expect(decision.status).toBe("granted");
    const bodies = reserveBodies().slice(-3);
    expect(seen.length - before).toBe(3);
    const keys = new Set(bodies.map((b) => b.idempotencyKey));
    expect(keys.size).toBe(1);
    const [key] = [...keys];
    expect(typeof key).toBe("string");
    const rows = await t.db
      .select({ id: reservations.id })
      .from(reservations)
      .where(eq(reservations.idempotencyKey, String(key)));
    expect(rows).toHaveLength(1);
  });

  it("fails closed when the server keeps answering 503, after its retries", async () => {
    const before = seen.length;
    failNext = 10;
    const decision = await client({ maxRetries: 2 }).reserve({ endpoint: endpoint.key, amount: 1 });
    failNext = 0;
    // The server's own reason beside the client's: its database is a closed port, refused at
    // once or still connecting at the server's deadline.
    expect(decision).toMatchObject({
      status: "refused",
      gate: "unavailable",
      reason: "server",
      serverReason: expect.stringMatching(/^(connection|deadline)$/),
      mayHaveApplied: false,
    });
    expect(seen.length - before).toBe(3);
  });

  it("passes on the server's word that a settle answered 503 was not applied", async () => {
    // The server's database is a closed port: the settle never reached it.
    failNext = 10;
    const answer = await client({ maxRetries: 1 }).settle("00000000-0000-4000-8000-000000000000", 1);
    failNext = 0;
    // The server's reason: the closed port's refusal, or its deadline passing while the dead
    // pool tries to connect, whichever comes first.
    expect(answer).toMatchObject({
      status: "unavailable",
      reason: "server",
      serverReason: expect.stringMatching(/^(connection|deadline)$/),
      mayHaveApplied: false,
    });
  });

  it("never throws for the network: a closed port and a silent server are `unavailable` by the deadline", async () => {
    const closed = createCeilingsClient({ baseUrl: "http://127.0.0.1:9", apiKey: secret, deadlineMs: 500, retryDelayMs: 10 });
    expect(await closed.reserve({ endpoint: endpoint.key, amount: 1 })).toMatchObject({
      status: "refused",
      gate: "unavailable",
      reason: "network",
      mayHaveApplied: false,
    });
    // A refused connection never sent the settle: it cannot have been applied.
    expect(await closed.settle("00000000-0000-4000-8000-000000000000", 1)).toMatchObject({ status: "unavailable", reason: "network", mayHaveApplied: false });

    // Accepts connections and never answers: only the deadline ends the call.
    const silent = new SilentHost();
    const port = await silent.listen();
    try {
      const started = Date.now();
      const c = createCeilingsClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: secret, deadlineMs: 300 });
      expect(await c.reserve({ endpoint: endpoint.key, amount: 1 })).toMatchObject({ status: "refused", gate: "unavailable", reason: "deadline" });
      expect(await c.endpointStatus(endpoint.key)).toMatchObject({ status: "unavailable", reason: "deadline" });
      // Sent, and no answer: it may have been applied (retry: settle is idempotent).
      expect(await c.release("00000000-0000-4000-8000-000000000000")).toMatchObject({ status: "unavailable", reason: "deadline", mayHaveApplied: true });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await silent.close();
    }
  });

  it("withReservation settles with the work's actual, and releases when the work throws", async () => {
    const c = client();
    const done = await c.withReservation({ endpoint: endpoint.key, amount: 5 }, async (grant) => ({ actual: 2, result: grant.reservationId }));
    expect(done).toMatchObject({ status: "done", settlement: { status: "settled", actual: 2 } });
    let thrownFor = "";
    await expect(
      c.withReservation({ endpoint: endpoint.key, amount: 5 }, async (grant) => {
        thrownFor = grant.reservationId;
        throw new Error("provider down");
      }),
    ).rejects.toThrow("provider down");
    const [row] = await t.db.select({ state: reservations.state }).from(reservations).where(eq(reservations.id, thrownFor));
    expect(row?.state).toBe("released");
  });

  it("a trusted accounts key puts accounts on plans one by one and in bulk; a key that reserves is refused; keys with accounts:read read the account", async () => {
    await t.db.insert(plans).values([
      { key: "free", name: "Free" },
      { key: "pro", name: "Pro" },
    ]);
    const billing = client({ apiKey: (await makeAccountsKey(t.db, { name: "billing" })).secret });
    const portal = client({ apiKey: (await makeAccountsKey(t.db, { name: "portal", account: "acct_client", scopes: ["accounts:read"] })).secret });
    expect(await billing.setAccountPlan("acct_client", "pro")).toEqual({
      status: "assigned",
      account: "acct_client",
      plan: "pro",
      previous: "default",
      previousWasDefault: true,
      changed: true,
    });
    expect(await billing.setAccountPlan("acct_client", "pro")).toMatchObject({ changed: false });
    expect(
      await billing.setAccountPlans([
        { account: "acct_one", plan: "free" },
        { account: "acct_client", plan: "pro" },
      ]),
    ).toMatchObject({ status: "assigned", assigned: 1, unchanged: 1 });
    const refused = await billing
      .setAccountPlans([
        { account: "acct_two", plan: "free" },
        { account: "acct_three", plan: "gold" },
      ])
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidRequestError);
    expect([(refused as InvalidRequestError).code, (refused as InvalidRequestError).rows]).toEqual([
      "invalid_rows",
      [{ index: 1, account: "acct_three", code: "unknown_plan", message: "unknown plan 'gold'" }],
    ]);
    const forbidden = await client()
      .setAccountPlan("acct_client", "free")
      .catch((e: unknown) => e);
    expect([forbidden instanceof ForbiddenError, (forbidden as ForbiddenError).code]).toEqual([true, "insufficient_scope"]);
    expect(await portal.getAccount("acct_client")).toMatchObject({
      status: "ok",
      account: "acct_client",
      plan: { key: "pro", name: "Pro" },
      planAssigned: true,
      blocked: null,
    });
    expect(await billing.getAccount("acct_one")).toMatchObject({
      status: "ok",
      plan: { key: "free" },
      planSetBy: expect.stringMatching(/^ck_\w+ \(billing\)$/),
    });
    failNext = 1;
    expect(await billing.setAccountPlan("acct_one", "pro")).toEqual({
      status: "assigned",
      account: "acct_one",
      plan: "pro",
      previous: "free",
      previousWasDefault: false,
      changed: true,
    });
  });
});
