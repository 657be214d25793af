import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { revokeApiKey } from "@/lib/api-keys";
import { setEndpointArchived } from "@/lib/catalog";
import { setupControl } from "@/lib/control/context";
import { counterTotals, makeEndpoint } from "@/lib/enforcement/test-fixtures";
import type { ApiDeps } from "./deps";
import { handleReserve } from "./reserve-handler";
import { apiRequest, chargeSnapshot, errorCode, makeKey, read, type Send } from "./test-support";

describe.skipIf(skipWithoutDatabase())("POST /api/v1/reservations on real Postgres", () => {
  const t = useTestDatabase("api_reserve", { max: 8 });
  const deps: ApiDeps = { db: async () => t.db };
  const post = async (send: Send) => read(await handleReserve(apiRequest("/api/v1/reservations", send), deps));

  it("grants 201 with remaining per ceiling, replays 200, and answers a changed retry 409", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 100 },
        { metric: "calls", scope: "caller", window: "utc_day", value: 10 },
      ],
    });
    const key = await makeKey(t.db, { endpoints: [e.key], account: "acct_a" });
    const first = await post({ key: key.secret, body: { endpoint: e.key, amount: 7, idempotencyKey: "k1" } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ replay: false, reservationId: expect.any(String), expiresAt: expect.any(String) });
    expect(first.body.remaining).toEqual([
      expect.objectContaining({ ceilingId: e.ceilingIds[0], scope: "global", metric: "units", limit: 100, used: 7, remaining: 93 }),
      expect.objectContaining({ ceilingId: e.ceilingIds[1], scope: "caller", metric: "calls", limit: 10, used: 1, remaining: 9 }),
    ]);
    const replay = await post({ key: key.secret, body: { endpoint: e.key, amount: 7, idempotencyKey: "k1" } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ replay: true, reservationId: first.body.reservationId });
    const conflict = await post({ key: key.secret, body: { endpoint: e.key, amount: 8, idempotencyKey: "k1" } });
    expect(conflict.status).toBe(409);
    expect(errorCode(conflict)).toBe("idempotency_conflict");
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 7, settled: 0 });
  });

  it("answers 410 endpoint_archived for an archived endpoint and charges nothing; unarchived, it grants again", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const key = await makeKey(t.db, { endpoints: [e.key] });
    const admin = { type: "staff", email: "admin@example.com" } as const;
    await setEndpointArchived(t.db, { key: e.key, archived: true, actor: admin, reason: "retired" });
    const archived = await post({ key: key.secret, body: { endpoint: e.key, amount: 1 } });
    expect(archived.status).toBe(410);
    expect(errorCode(archived)).toBe("endpoint_archived");
    expect(await counterTotals(t.db, e.ceilingIds[0] ?? 0)).toEqual({ held: 0, settled: 0 });
    await setEndpointArchived(t.db, {
      key: e.key,
      archived: false,
      actor: admin,
      reason: "back",
      changeControl: setupControl("test: an unarchive is a raise, approved elsewhere"),
    });
    expect((await post({ key: key.secret, body: { endpoint: e.key, amount: 1 } })).status).toBe(201);
  });

  it("refuses with 429 naming the gate, with Retry-After for a ceiling and without it for the per-call max", async () => {
    const e = await makeEndpoint(t.db, { perCallMax: 5, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 6 }] });
    const key = await makeKey(t.db, { endpoints: [e.key] });
    expect((await post({ key: key.secret, body: { endpoint: e.key, amount: 5 } })).status).toBe(201);
    const over = await post({ key: key.secret, body: { endpoint: e.key, amount: 2 } });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ gate: "ceiling", ceilingId: e.ceilingIds[0], remaining: 1, error: { code: "ceiling" } });
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    const tooBig = await post({ key: key.secret, body: { endpoint: e.key, amount: 6 } });
    expect(tooBig.status).toBe(429);
    expect(tooBig.body).toMatchObject({ gate: "per_call_max", error: { code: "per_call_max" } });
    expect(tooBig.headers.get("retry-after")).toBeNull();
  });

  it("answers every bad input with its status and code, and charges nothing", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], account: "acct_bad" });
    const revoked = await makeKey(t.db, { endpoints: [e.key], account: "acct_bad" });
    await revokeApiKey(t.db, { id: revoked.id, actor: { type: "system", name: "test" } });
    // Charge once so the snapshot has a counter row to compare.
    expect((await post({ key: key.secret, body: { endpoint: e.key, amount: 1 } })).status).toBe(201);
    const before = await chargeSnapshot(t.db);
    const ok = (extra: Record<string, unknown>) => ({ endpoint: e.key, amount: 1, ...extra });
    const cases: { name: string; send: Send; status: number; code: string }[] = [
      { name: "amount as the string '1e9'", send: { key: key.secret, body: ok({ amount: "1e9" }) }, status: 400, code: "invalid_amount" },
      { name: "amount 1.5", send: { key: key.secret, body: ok({ amount: 1.5 }) }, status: 400, code: "invalid_amount" },
      { name: "amount -5", send: { key: key.secret, body: ok({ amount: -5 }) }, status: 400, code: "invalid_amount" },
      { name: "amount 0", send: { key: key.secret, body: ok({ amount: 0 }) }, status: 400, code: "invalid_amount" },
      {
        name: "amount 2^63",
        send: { key: key.secret, raw: `{"endpoint":"${e.key}","amount":9223372036854775808}` },
        status: 400,
        code: "invalid_amount",
      },
      { name: "amount missing", send: { key: key.secret, body: { endpoint: e.key } }, status: 400, code: "invalid_amount" },
      { name: "endpoint missing", send: { key: key.secret, body: { amount: 1 } }, status: 400, code: "invalid_input" },
      { name: "endpoint not a string", send: { key: key.secret, body: ok({ endpoint: 42 }) }, status: 400, code: "invalid_input" },
      { name: "ttlSeconds 0", send: { key: key.secret, body: ok({ ttlSeconds: 0 }) }, status: 400, code: "invalid_ttl" },
      { name: "a misspelt field", send: { key: key.secret, body: ok({ idempotency_key: "x" }) }, status: 400, code: "unknown_field" },
      { name: "a JSON array", send: { key: key.secret, body: [ok({})] }, status: 400, code: "invalid_input" },
      { name: "an empty body", send: { key: key.secret, raw: "" }, status: 400, code: "invalid_input" },
      { name: "malformed JSON", send: { key: key.secret, raw: `{"endpoint": "${e.key}", "amount": 1` }, status: 400, code: "invalid_json" },
      { name: "an oversized body", send: { key: key.secret, body: ok({ destination: "x".repeat(17_000) }) }, status: 413, code: "body_too_large" },
      { name: "an unknown endpoint", send: { key: key.secret, body: ok({ endpoint: "no.such-endpoint" }) }, status: 404, code: "unknown_endpoint" },
      { name: "a key for another endpoint", send: { key: key.secret, body: ok({ endpoint: other.key }) }, status: 403, code: "endpoint_not_allowed" },
      { name: "another account as caller", send: { key: key.secret, body: ok({ caller: "acct_other" }) }, status: 403, code: "caller_not_allowed" },
      { name: "a revoked key", send: { key: revoked.secret, body: ok({}) }, status: 401, code: "revoked_api_key" },
      { name: "no key", send: { body: ok({}) }, status: 401, code: "missing_api_key" },
      { name: "an unknown key", send: { key: `ck_abcdefgh_${"A".repeat(43)}`, body: ok({}) }, status: 401, code: "invalid_api_key" },
      { name: "a malformed key", send: { key: "hunter2", body: ok({}) }, status: 401, code: "invalid_api_key" },
    ];
    const seen = [];
    for (const c of cases) {
      const answer = await post(c.send);
      seen.push({
        name: c.name,
        status: answer.status,
        code: errorCode(answer),
        hasMessage: typeof (answer.body.error as { message?: unknown })?.message === "string",
      });
    }
    expect(seen).toEqual(cases.map((c) => ({ name: c.name, status: c.status, code: c.code, hasMessage: true })));
    expect(await chargeSnapshot(t.db)).toBe(before);
  });

  it("lets two keys of one account share its per-caller quota, while another account keeps its own", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "caller", window: "utc_day", value: 3 }] });
    const one = await makeKey(t.db, { endpoints: [e.key], account: "acct_shared", name: "one" });
    const two = await makeKey(t.db, { endpoints: [e.key], account: "acct_shared", name: "two" });
    const service = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    const other = await makeKey(t.db, { endpoints: [e.key], account: "acct_other" });
    expect((await post({ key: one.secret, body: { endpoint: e.key, amount: 2 } })).status).toBe(201);
    expect((await post({ key: two.secret, body: { endpoint: e.key, amount: 1 } })).status).toBe(201);
    const refused = await post({ key: two.secret, body: { endpoint: e.key, amount: 1 } });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ gate: "ceiling", remaining: 0 });
    // A trusted service naming the account draws on the same quota.
    expect((await post({ key: service.secret, body: { endpoint: e.key, amount: 1, caller: "acct_shared" } })).status).toBe(429);
    expect((await post({ key: other.secret, body: { endpoint: e.key, amount: 3 } })).status).toBe(201);
    // A trusted service must name a caller where a per-caller ceiling needs one.
    const anonymous = await post({ key: service.secret, body: { endpoint: e.key, amount: 1 } });
    expect([anonymous.status, errorCode(anonymous)]).toEqual([400, "caller_required"]);
  });

  it("records a key's last use at most once a minute", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const key = await makeKey(t.db, { endpoints: [e.key] });
    const lastUsed = async () => (await t.db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.id, key.id)))[0]?.at ?? null;
    expect(await lastUsed()).toBeNull();
    let clock = Date.now();
    const timed: ApiDeps = { db: deps.db, now: () => new Date(clock) };
    const send = async () => read(await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, amount: 1 } }), timed));
    // The request does not wait for the write (it must never hold the call): read it once it landed.
    const settledUse = async (done: (at: Date | null) => boolean) => {
      for (const until = Date.now() + 5000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
        const at = await lastUsed();
        if (done(at)) return at;
      }
      return lastUsed();
    };
    expect((await send()).status).toBe(201);
    const first = await settledUse((at) => at !== null);
    expect(first).not.toBeNull();
    // Pretend the recorded use is old: a request within the same minute must not write again.
    const old = new Date(Date.now() - 3_600_000);
    await t.db.update(apiKeys).set({ lastUsedAt: old }).where(eq(apiKeys.id, key.id));
    clock += 30_000;
    expect((await send()).status).toBe(201);
    // Time for a write that should not happen to land, had it been started.
    await new Promise((r) => setTimeout(r, 300));
    expect(await lastUsed()).toEqual(old);
    clock += 31_000;
    expect((await send()).status).toBe(201);
    expect((await settledUse((at) => (at?.getTime() ?? 0) > old.getTime()))?.getTime()).toBeGreaterThan(old.getTime());
  });

  it("answers 503 when the database cannot be reached, and a revoked key fails on its next request", async () => {
    const { openPostgres } = await import("@/db/client");
    // A closed port: the same failure as a dead database, without touching the shared server.
    const dead = openPostgres("postgres://postgres@127.0.0.1:9/nowhere", { max: 1, connectTimeoutSeconds: 1 });
    try {
      const answer = await read(
        await handleReserve(apiRequest("/api/v1/reservations", { key: `ck_abcdefgh_${"A".repeat(43)}`, body: {} }), { db: async () => dead.db }),
      );
      expect([answer.status, errorCode(answer)]).toEqual([503, "unavailable"]);
    } finally {
      await dead.close();
    }
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const key = await makeKey(t.db, { endpoints: [e.key] });
    expect((await post({ key: key.secret, body: { endpoint: e.key, amount: 1 } })).status).toBe(201);
    await revokeApiKey(t.db, { id: key.id, actor: { type: "system", name: "test" } });
    const after = await post({ key: key.secret, body: { endpoint: e.key, amount: 1 } });
    expect([after.status, errorCode(after)]).toEqual([401, "revoked_api_key"]);
  });
});
