import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, type Database } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { revokeApiKey } from "@/lib/api-keys";
import { setEndpointArchived } from "@/lib/catalog";
import { setupControl } from "@/lib/control/context";
import { makeBudget, priceEndpoint } from "@/lib/enforcement/budget-fixtures";
import { setBlocked } from "@/lib/enforcement/plan-fixtures";
import { makeEndpoint, setCeilingValue } from "@/lib/enforcement/test-fixtures";
import { type ApiAnswer, type ApiRequest, openApiDocument } from "@/lib/http";
import { answerMethod } from "@/lib/http/methods";
import { API_ERROR_CODE_NAMES, API_ERROR_CODES, type ApiErrorCode } from "@/lib/http/openapi-schemas";
import { OPERATION_ERRORS } from "@/lib/http/openapi";
import { GET as openApiRoute } from "../openapi.json/route";
import type { ApiDeps } from "./deps";
import { ajv, conformance, doc, schemaAt, seen, serve } from "./openapi-check";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { handleEndpointStatus } from "./status-handler";
import { handleAssignPlan, handleAssignPlans, handleGetAccount } from "./accounts-handler";
import { plans } from "@/db/schema";
import { apiRequest, makeAccountsKey, makeKey, type Send } from "./test-support";
import { insertPlanValue } from "@/lib/limits/test-fixtures";

// The OpenAPI document against real answers: every documented route, every documented status and
// every error code the document lists for it is produced by a real request through proxy.ts and
// the real handler on real Postgres; each answer must match its status's schema and documented
// headers, and the run fails on a status or code the document does not list, and on one it lists
// that no request produced. So the document and the server cannot drift apart.

describe("the OpenAPI document", () => {
  it("is OpenAPI 3.1 with a server, served at /api/v1/openapi.json, and every response schema compiles", async () => {
    const served = (await openApiRoute().json()) as Record<string, unknown>;
    expect(served.openapi).toBe("3.1.0");
    expect(served).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    expect(served.servers).toEqual([expect.objectContaining({ url: "/" })]);
    for (const [p, methods] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(methods)) {
        for (const status of Object.keys(op.responses))
          expect(typeof schemaAt("paths", p, m, "responses", status, "content", "application/json", "schema")).toBe("function");
      }
    }
  });

  it("lists every error code once with its status (x-error-codes), and each operation's codes under their own status", () => {
    const listed = doc["x-error-codes"] as { code: string; status: number; meaning: string }[];
    expect(listed.map((c) => c.code)).toEqual(API_ERROR_CODE_NAMES);
    expect(new Set(listed.map((c) => c.code)).size).toBe(listed.length);
    for (const c of listed) expect(c.meaning.length, c.code).toBeGreaterThan(10);
    const used = new Set<string>(["method_not_allowed", "not_found"]); // answered by proxy.ts and the method guard, on any path
    for (const [op, byStatus] of Object.entries(OPERATION_ERRORS)) {
      for (const [status, codes] of Object.entries(byStatus) as [string, readonly ApiErrorCode[]][]) {
        for (const code of codes) {
          expect([op, code, API_ERROR_CODES[code].status]).toEqual([op, code, Number(status)]);
          used.add(code);
        }
      }
    }
    expect(API_ERROR_CODE_NAMES.filter((c) => !used.has(c))).toEqual([]);
  });

  it("documents the answers a path gives to a method it does not serve", () => {
    const errorCode = ajv.compile({ enum: (doc["x-error-codes"] as { code: string }[]).map((c) => c.code) });
    for (const [path, method] of [
      ["/api/v1/reservations", "PUT"],
      ["/api/v1/endpoints/x", "POST"],
      ["/api/v1/reservations/x/settle", "GET"],
      ["/api/v1/nope", "TRACE"],
    ] as const) {
      const answer = answerMethod(path, method);
      const body = JSON.parse(answer?.body ?? "{}") as { error: { code: string } };
      expect(errorCode(body.error.code), `${method} ${path}`).toBe(true);
      expect(answer?.status).toBe(API_ERROR_CODES[body.error.code as keyof typeof API_ERROR_CODES].status);
    }
  });
});

describe.skipIf(skipWithoutDatabase())("real answers of every route match the OpenAPI document", () => {
  const t = useTestDatabase("openapi", { max: 6 });
  const deps: ApiDeps = { db: async () => t.db };
  let dead: Database;
  let deadDeps: ApiDeps;
  let brokenDeps: ApiDeps;
  const problems: string[] = [];

  beforeAll(async () => {
    dead = openPostgres("postgres://postgres@127.0.0.1:9/nowhere", { max: 1, connectTimeoutSeconds: 1 });
    deadDeps = { db: async () => dead.db };
    // A bug, not an outage: an exception no failure class knows is a 500 internal, never a 503.
    brokenDeps = {
      db: async () => {
        throw new TypeError("a bug in the server");
      },
    };
  });
  afterAll(async () => {
    await dead?.close();
  });

  const R = "/api/v1/reservations";
  const run = async (path: string, method: "post" | "get" | "put", url: string, send: Send, handler: (r: ApiRequest) => Promise<ApiAnswer>) => {
    const answer = await serve(apiRequest(url, { ...send, method: method.toUpperCase() }), handler);
    problems.push(...conformance(path, method, answer));
    return answer as { status: number; body: Record<string, unknown>; headers: Headers };
  };
  const reserve = (send: Send, d = deps) => run(R, "post", R, send, (r) => handleReserve(r, d));
  const resolve = (id: string, verb: "settle" | "release", send: Send, d = deps) =>
    run(`${R}/{id}/${verb}`, "post", `${R}/${encodeURIComponent(id)}/${verb}`, send, (r) => handleResolve(r, id, verb, d));
  const status = (key: string, send: Send, query = "", d = deps) =>
    run("/api/v1/endpoints/{key}", "get", `/api/v1/endpoints/${encodeURIComponent(key)}${query}`, send, (r) => handleEndpointStatus(r, key, d));
  const A = "/api/v1/accounts";
  const assign = (account: string, send: Send, d = deps) =>
    run(`${A}/{account}`, "put", `${A}/${encodeURIComponent(account)}`, send, (r) => handleAssignPlan(r, account, d));
  const bulk = (send: Send, d = deps) => run(`${A}:bulk`, "post", `${A}:bulk`, send, (r) => handleAssignPlans(r, d));
  const account = (id: string, send: Send, d = deps) => run(`${A}/{account}`, "get", `${A}/${encodeURIComponent(id)}`, send, (r) => handleGetAccount(r, id, d));
  const code = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code;

  it("every route, every status and every error code the document lists", { timeout: 120_000 }, async () => {
    const admin = { type: "staff", email: "admin@example.com" } as const;
    const e = await makeEndpoint(t.db, {
      perCallMax: 20,
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 24 },
        { metric: "calls", scope: "caller", window: "utc_day", value: 100 },
      ],
    });
    const other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const cool = await makeEndpoint(t.db, {
      ceilings: [{ metric: "calls", scope: "destination", window: "first_hit", windowSeconds: 3600, value: 1, destinationKind: "email" }],
    });
    const slow = await makeEndpoint(t.db, { throttlePerMinute: 1, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const a = (await makeKey(t.db, { endpoints: [e.key, cool.key, slow.key], account: "acct_a" })).secret;
    const b = (await makeKey(t.db, { endpoints: [e.key], account: "acct_b" })).secret;
    const trusted = (await makeKey(t.db, { endpoints: [e.key], trusted: true })).secret;
    const narrow = (await makeKey(t.db, { endpoints: [other.key], trusted: true })).secret;
    // The accounts routes take keys with accounts scopes and no endpoint.
    const billing = (await makeAccountsKey(t.db)).secret;
    const aReader = (await makeAccountsKey(t.db, { account: "acct_a", scopes: ["accounts:read"] })).secret;
    const revokedKey = await makeKey(t.db, { endpoints: [e.key], account: "acct_a" });
    await revokeApiKey(t.db, { id: revokedKey.id, actor: admin });
    const revoked = revokedKey.secret;
    const bogus = "ck_abcd1234_notakeyatallnotakeyatallnotakeyatall";

    // POST /api/v1/reservations
    const granted = await reserve({ key: a, body: { endpoint: e.key, amount: 5, idempotencyKey: "o1" }, headers: { "x-request-id": "r".repeat(100) } });
    expect(granted.status).toBe(201);
    expect((await reserve({ key: a, body: { endpoint: e.key, amount: 5, idempotencyKey: "o1" } })).status).toBe(200);
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 6, idempotencyKey: "o1" } }))).toBe("idempotency_conflict");
    const bad: [Send, string][] = [
      [{ raw: "{" }, "invalid_json"],
      [{ raw: `{"endpoint":"${e.key}","amount":1,"x":${"[".repeat(40)}${"]".repeat(40)}}` }, "nesting_too_deep"],
      [{ raw: `{"endpoint":"${e.key}","amount":1,"amount":2}` }, "duplicate_field"],
      [{ body: { endpoint: e.key, amount: 1, caller: "a\u0000b" } }, "invalid_characters"],
      [{ body: { endpoint: e.key, amount: 1, bogus: 1 } }, "unknown_field"],
      [{ body: { endpoint: e.key, amount: 1, caller: "   " } }, "invalid_input"],
      [{ body: { endpoint: e.key, amount: 1.5 } }, "invalid_amount"],
      [{ body: { endpoint: e.key, amount: 1, ttlSeconds: 0 } }, "invalid_ttl"],
      [{ body: { endpoint: e.key, amount: 1 }, headers: { "x-request-id": "r".repeat(101) } }, "invalid_request_id"],
      [{ body: { endpoint: e.key, amount: 1 }, headers: { "x-request-id": "a\u0085b" } }, "invalid_request_id"],
      [{ body: { endpoint: e.key, amount: 1, destination: "a@" } }, "invalid_destination"],
      [{ body: { endpoint: cool.key, amount: 1 } }, "destination_required"],
      [{ body: { endpoint: cool.key, amount: 1, destination: "+1 415 555 0100" } }, "invalid_destination"],
    ];
    for (const [send, want] of bad) expect([want, code(await reserve({ key: a, ...send }))]).toEqual([want, want]);
    expect(code(await reserve({ key: trusted, body: { endpoint: e.key, amount: 1 } }))).toBe("caller_required");
    expect(code(await reserve({ key: billing, body: { endpoint: e.key, amount: 1, caller: "acct_a" } }))).toBe("insufficient_scope");
    expect(code(await reserve({ body: { endpoint: e.key, amount: 1 } }))).toBe("missing_api_key");
    expect(code(await reserve({ key: bogus, body: { endpoint: e.key, amount: 1 } }))).toBe("invalid_api_key");
    expect(code(await reserve({ key: revoked, body: { endpoint: e.key, amount: 1 } }))).toBe("revoked_api_key");
    expect(code(await reserve({ key: a, body: { endpoint: other.key, amount: 1 } }))).toBe("endpoint_not_allowed");
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 1, caller: "acct_z" } }))).toBe("caller_not_allowed");
    expect(code(await reserve({ key: a, body: { endpoint: "no.such", amount: 1 } }))).toBe("unknown_endpoint");
    await setEndpointArchived(t.db, { key: e.key, archived: true, actor: admin, reason: "openapi test" });
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 1 } }))).toBe("endpoint_archived");
    await setEndpointArchived(t.db, {
      key: e.key,
      archived: false,
      actor: admin,
      reason: "openapi test",
      changeControl: setupControl("test: an unarchive is a raise, approved elsewhere"),
    });
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 1, destination: "x".repeat(17_000) } }))).toBe("body_too_large");
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 21 } }))).toBe("per_call_max");
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 20 } }))).toBe("ceiling");
    expect((await reserve({ key: a, body: { endpoint: cool.key, amount: 1, destination: "jane@example.com" } })).status).toBe(201);
    expect(code(await reserve({ key: a, body: { endpoint: cool.key, amount: 1, destination: "Jane@Example.com" } }))).toBe("cooldown");
    expect((await reserve({ key: a, body: { endpoint: slow.key, amount: 1 } })).status).toBe(201);
    const throttled = [];
    for (let i = 0; i < 3; i++) throttled.push(code(await reserve({ key: a, body: { endpoint: slow.key, amount: 1 } })));
    expect(throttled).toContain("throttle");
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 0);
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 1 } }))).toBe("kill_switch");
    await setCeilingValue(t.db, e.ceilingIds[0] ?? 0, 24);
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 1 } }, deadDeps))).toBe("unavailable");
    expect(code(await reserve({ key: a, body: { endpoint: e.key, amount: 1 } }, brokenDeps))).toBe("internal");
    // A blocked account: refused on every endpoint, then unblocked.
    await setBlocked(t.db, "acct_a", true);
    expect(code(await reserve({ key: a, body: { endpoint: slow.key, amount: 1 } }))).toBe("blocked");
    await setBlocked(t.db, "acct_a", false);

    // Priced parts and a budget: parts the endpoint does not have, one amount where parts are
    // priced apart, a budget's refusal, and a settle by parts.
    const llm = await makeEndpoint(t.db, { perCallMax: 100_000, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
    await priceEndpoint(t.db, llm.endpointId, { input: 2_500_000, output: 10_000_000 });
    await makeBudget(t.db, { endpointIds: [llm.endpointId], value: 10_000 });
    const c = (await makeKey(t.db, { endpoints: [llm.key], account: "acct_c" })).secret;
    expect(code(await reserve({ key: c, body: { endpoint: llm.key, amount: 10 } }))).toBe("invalid_parts");
    expect(code(await reserve({ key: c, body: { endpoint: llm.key, parts: { input: 1, outptu: 1 } } }))).toBe("invalid_parts");
    expect(code(await reserve({ key: c, body: { endpoint: llm.key, parts: { input: 1 } } }))).toBe("invalid_parts");
    expect(code(await reserve({ key: c, body: { endpoint: llm.key, parts: { input: -1, output: 1 } } }))).toBe("invalid_input");
    const priced = await reserve({ key: c, body: { endpoint: llm.key, parts: { input: 1000, output: 500 } } });
    expect(priced.status).toBe(201);
    const over = await reserve({ key: c, body: { endpoint: llm.key, parts: { input: 0, output: 1000 } } });
    expect([code(over), over.body.gate, over.body.cost]).toEqual(["budget", "budget", 10_000]);
    const pricedId = String(priced.body.reservationId);
    expect(code(await resolve(pricedId, "settle", { key: c, body: { actual: 1500 } }))).toBe("invalid_parts");
    expect(code(await resolve(pricedId, "settle", { key: c, body: { parts: { input: 1000, output: 1, extra: 1 } } }))).toBe("invalid_parts");
    expect((await resolve(pricedId, "settle", { key: c, body: { parts: { input: 1000, output: 200 } } })).status).toBe(200);

    // settle and release
    const id = String(granted.body.reservationId);
    const second = String((await reserve({ key: a, body: { endpoint: e.key, amount: 2 } })).body.reservationId);
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const verb of ["settle", "release"] as const) {
      const body = verb === "settle" ? { actual: 3 } : {};
      const target = verb === "settle" ? id : second;
      expect(code(await resolve(target, verb, { key: b, body }))).toBe("reservation_forbidden");
      expect(code(await resolve(target, verb, { key: narrow, body }))).toBe("endpoint_not_allowed");
      expect(code(await resolve(target, verb, { key: billing, body }))).toBe("insufficient_scope");
      const bodyErrors: [Send, string][] = [
        [{ raw: "{" }, "invalid_json"],
        [{ raw: "[".repeat(33) + "]".repeat(33) }, "nesting_too_deep"],
        [{ raw: verb === "settle" ? '{"actual":1,"actual":2}' : '{"a":1,"a":1}' }, "duplicate_field"],
        [{ raw: '{"\\u0000":1}' }, "invalid_characters"],
        [{ body: { ...body, bogus: 1 } }, "unknown_field"],
        [{ raw: "[]" }, "invalid_input"],
      ];
      if (verb === "settle") bodyErrors.push([{ body: { actual: -1 } }, "invalid_amount"], [{ body: { actual: 21 } }, "invalid_actual"]);
      for (const [send, want] of bodyErrors) expect([verb, want, code(await resolve(target, verb, { key: a, ...send }))]).toEqual([verb, want, want]);
      expect((await resolve(target, verb, { key: a, body })).status).toBe(200);
      expect((await resolve(target, verb, { key: a, body })).body.replay).toBe(true);
      expect(code(await resolve(unknown, verb, { key: a, body }))).toBe("reservation_not_found");
      expect(code(await resolve("abc", verb, { key: a, body }))).toBe("invalid_reservation_id");
      // The input boundary of proxy.ts: a control character in a path segment.
      expect(
        code(await run(`${R}/{id}/${verb}`, "post", `${R}/%00/${verb}`, { key: a, body }, () => Promise.reject(new Error("must not reach the handler")))),
      ).toBe("invalid_input");
      expect(code(await resolve(target, verb, { body }))).toBe("missing_api_key");
      expect(code(await resolve(target, verb, { key: bogus, body }))).toBe("invalid_api_key");
      expect(code(await resolve(target, verb, { key: revoked, body }))).toBe("revoked_api_key");
      expect(code(await resolve(target, verb, { key: a, raw: JSON.stringify({ x: "y".repeat(17_000) }) }))).toBe("body_too_large");
      expect(code(await resolve(target, verb, { key: a, body }, deadDeps))).toBe("unavailable");
      expect(code(await resolve(target, verb, { key: a, body }, brokenDeps))).toBe("internal");
    }
    expect(code(await resolve(second, "settle", { key: a, body: { actual: 1 } }))).toBe("already_resolved");
    expect(code(await resolve(id, "release", { key: a, body: {} }))).toBe("already_resolved");
    // A settle above the reservation after its release: recorded and charged, and said so.
    const overrun = await resolve(second, "settle", { key: a, body: { actual: 4 } });
    expect([overrun.status, overrun.body.overrun, overrun.body.charged, overrun.body.state]).toEqual([409, true, 4, "released"]);
    // The key of a settled reservation: a replay is not a grant.
    const replayed = await reserve({ key: a, body: { endpoint: e.key, amount: 5, idempotencyKey: "o1" } });
    expect([replayed.status, code(replayed), replayed.body.state]).toEqual([409, "already_resolved", "settled"]);

    // GET /api/v1/endpoints/{key}
    expect((await status(e.key, { key: a })).status).toBe(200);
    expect((await status(e.key, { key: trusted }, "?caller=acct_a")).status).toBe(200);
    expect(code(await status(e.key, { key: a }, "?caller=%20"))).toBe("invalid_input");
    expect(code(await status("k".repeat(65), { key: a }))).toBe("invalid_input");
    expect(code(await status(e.key, {}))).toBe("missing_api_key");
    expect(code(await status(e.key, { key: bogus }))).toBe("invalid_api_key");
    expect(code(await status(e.key, { key: revoked }))).toBe("revoked_api_key");
    expect(code(await status(other.key, { key: a }))).toBe("endpoint_not_allowed");
    expect(code(await status(e.key, { key: a }, "?caller=acct_z"))).toBe("caller_not_allowed");
    expect(code(await status(e.key, { key: billing }))).toBe("insufficient_scope");
    expect(code(await status("no.such", { key: a }))).toBe("unknown_endpoint");
    expect(code(await status(e.key, { key: a }, "", deadDeps))).toBe("unavailable");
    expect(code(await status(e.key, { key: a }, "", brokenDeps))).toBe("internal");

    // PUT /api/v1/accounts/{account}, POST /api/v1/accounts:bulk, GET /api/v1/accounts/{account}
    await t.db.insert(plans).values({ key: "pro", name: "Pro" });
    expect((await assign("acct_a", { key: billing, body: { plan: "pro" } })).body).toMatchObject({
      account: "acct_a",
      plan: "pro",
      previous: "default",
      changed: true,
    });
    const assignErrors: [Send, string][] = [
      [{ raw: "{" }, "invalid_json"],
      [{ raw: `{"plan":${"[".repeat(40)}${"]".repeat(40)}}` }, "nesting_too_deep"],
      [{ raw: '{"plan":"pro","plan":"default"}' }, "duplicate_field"],
      [{ raw: '{"plan":"pro\\u0000"}' }, "invalid_characters"],
      [{ body: { plan: "pro", reason: "x" } }, "unknown_field"],
      [{ body: { plan: 5 } }, "invalid_input"],
      [{ body: { plan: "platinum" } }, "unknown_plan"],
      [{ raw: JSON.stringify({ plan: "p".repeat(17_000) }) }, "body_too_large"],
    ];
    for (const [send, want] of assignErrors) expect(["assign", want, code(await assign("acct_a", { key: billing, ...send }))]).toEqual(["assign", want, want]);
    expect(code(await assign("x".repeat(300), { key: billing, body: { plan: "pro" } }))).toBe("invalid_input");
    expect(code(await assign("acct_a", { body: { plan: "pro" } }))).toBe("missing_api_key");
    expect(code(await assign("acct_a", { key: bogus, body: { plan: "pro" } }))).toBe("invalid_api_key");
    expect(code(await assign("acct_a", { key: revoked, body: { plan: "pro" } }))).toBe("revoked_api_key");
    expect(code(await assign("acct_a", { key: a, body: { plan: "pro" } }))).toBe("insufficient_scope");
    // A plan looser than the default on the caller ceiling (200 calls above its own 100), not assignable by key.
    const [rich] = await t.db.insert(plans).values({ key: "rich", name: "Rich" }).returning({ id: plans.id });
    await insertPlanValue(t.db, "ceiling", e.ceilingIds[1] ?? 0, { planId: rich?.id ?? 0, value: 200 });
    expect(code(await assign("acct_rich", { key: billing, body: { plan: "rich" } }))).toBe("plan_not_key_assignable");
    expect(code(await assign("acct_a", { key: billing, body: { plan: "pro" } }, deadDeps))).toBe("unavailable");
    expect(code(await assign("acct_a", { key: billing, body: { plan: "pro" } }, brokenDeps))).toBe("internal");

    expect(
      (
        await bulk({
          key: billing,
          body: {
            accounts: [
              { account: "acct_b", plan: "pro" },
              { account: "acct_c", plan: "default" },
            ],
          },
        })
      ).body,
    ).toMatchObject({ assigned: 2, unchanged: 0 });
    const bulkErrors: [Send, string][] = [
      [{ raw: "{" }, "invalid_json"],
      [{ raw: `{"accounts":${"[".repeat(40)}${"]".repeat(40)}}` }, "nesting_too_deep"],
      [{ raw: '{"accounts":[{"account":"a","plan":"pro","plan":"free"}]}' }, "duplicate_field"],
      [{ raw: '{"accounts":[{"account":"a\\u0007","plan":"pro"}]}' }, "invalid_characters"],
      [{ body: { accounts: [], dryRun: true } }, "unknown_field"],
      [{ body: { accounts: [] } }, "invalid_input"],
      [
        {
          body: {
            accounts: [
              { account: "acct_d", plan: "pro" },
              { account: "acct_e", plan: "platinum" },
            ],
          },
        },
        "invalid_rows",
      ],
      [{ body: { accounts: Array.from({ length: 10_001 }, (_, i) => ({ account: `acct_${i}`, plan: "pro" })) } }, "too_many"],
      [{ raw: JSON.stringify({ accounts: [{ account: "a", plan: "p".repeat(4 * 1024 * 1024) }] }) }, "body_too_large"],
    ];
    for (const [send, want] of bulkErrors) expect(["bulk", want, code(await bulk({ key: billing, ...send }))]).toEqual(["bulk", want, want]);
    expect(code(await bulk({ body: { accounts: [] } }))).toBe("missing_api_key");
    expect(code(await bulk({ key: bogus, body: { accounts: [] } }))).toBe("invalid_api_key");
    expect(code(await bulk({ key: revoked, body: { accounts: [] } }))).toBe("revoked_api_key");
    expect(code(await bulk({ key: aReader, body: { accounts: [{ account: "acct_a", plan: "pro" }] } }))).toBe("insufficient_scope");
    expect(code(await bulk({ key: billing, body: { accounts: [{ account: "acct_rich", plan: "rich" }] } }))).toBe("plan_not_key_assignable");
    expect(code(await bulk({ key: billing, body: { accounts: [] } }, deadDeps))).toBe("unavailable");
    expect(code(await bulk({ key: billing, body: { accounts: [] } }, brokenDeps))).toBe("internal");

    expect((await account("acct_a", { key: billing, method: "GET" })).body).toMatchObject({ account: "acct_a", plan: { key: "pro" }, blocked: null });
    expect((await account("acct_a", { key: aReader, method: "GET" })).status).toBe(200);
    expect(code(await account("acct_a", { key: a, method: "GET" }))).toBe("insufficient_scope");
    expect(code(await account("   ", { key: billing, method: "GET" }))).toBe("invalid_input");
    expect(code(await account("acct_a", { method: "GET" }))).toBe("missing_api_key");
    expect(code(await account("acct_a", { key: bogus, method: "GET" }))).toBe("invalid_api_key");
    expect(code(await account("acct_a", { key: revoked, method: "GET" }))).toBe("revoked_api_key");
    expect(code(await account("acct_b", { key: aReader, method: "GET" }))).toBe("caller_not_allowed");
    expect(code(await account("acct_a", { key: billing, method: "GET" }, deadDeps))).toBe("unavailable");
    expect(code(await account("acct_a", { key: billing, method: "GET" }, brokenDeps))).toBe("internal");

    expect(problems).toEqual([]);
    const listed = Object.values(doc.paths).flatMap((methods) =>
      Object.values(methods).flatMap((op) => Object.keys(op.responses).map((s) => `${op.operationId} ${s}`)),
    );
    expect(listed.filter((l) => !seen.statuses.has(l))).toEqual([]);
    const codes = Object.entries(OPERATION_ERRORS).flatMap(([op, byStatus]) =>
      (Object.entries(byStatus) as [string, readonly ApiErrorCode[]][]).flatMap(([s, list]) => list.map((c) => `${op} ${s} ${c}`)),
    );
    expect(codes.filter((c) => !seen.codes.has(c))).toEqual([]);
    expect([...seen.codes].filter((c) => !codes.includes(c))).toEqual([]);
  });
});
