import { beforeAll, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { counterTotals, makeEndpoint } from "@/lib/enforcement/test-fixtures";
import type { ApiDeps } from "./deps";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { apiRequest, chargeSnapshot, errorCode, makeKey, read, type Send } from "./test-support";

describe.skipIf(skipWithoutDatabase())("settle and release over HTTP on real Postgres", () => {
  const t = useTestDatabase("api_resolve", { max: 6 });
  const deps: ApiDeps = { db: async () => t.db };
  let endpoint: Awaited<ReturnType<typeof makeEndpoint>>;
  let keyA: string;
  let keyB: string;
  let service: string;

  const reserveAs = async (key: string, amount = 5, extra: Record<string, unknown> = {}) => {
    const answer = await read(await handleReserve(apiRequest("/api/v1/reservations", { key, body: { endpoint: endpoint.key, amount, ...extra } }), deps));
    expect(answer.status).toBe(201);
    return String(answer.body.reservationId);
  };
  const resolve = async (id: string, verb: "settle" | "release", send: Send) =>
    read(await handleResolve(apiRequest(`/api/v1/reservations/${id}/${verb}`, send), id, verb, deps));

  beforeAll(async () => {
    endpoint = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 100 },
      ],
    });
    keyA = (await makeKey(t.db, { endpoints: [endpoint.key], account: "acct_a" })).secret;
    keyB = (await makeKey(t.db, { endpoints: [endpoint.key], account: "acct_b" })).secret;
    service = (await makeKey(t.db, { endpoints: [endpoint.key], trusted: true })).secret;
  });

  it("settles to the actual use (200) and replays the same settle", async () => {
    const id = await reserveAs(keyA, 10);
    const settled = await resolve(id, "settle", { key: keyA, body: { actual: 4 } });
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ status: "settled", reservationId: id, actual: 4, overrun: false, replay: false });
    const again = await resolve(id, "settle", { key: keyA, body: { actual: 4 } });
    expect([again.status, again.body.replay]).toEqual([200, true]);
    const changed = await resolve(id, "settle", { key: keyA, body: { actual: 3 } });
    expect([changed.status, errorCode(changed), changed.body.state]).toEqual([409, "already_resolved", "settled"]);
  });

  it("refuses a settle above the per-call max with 400 invalid_actual, and a replayed released key with 409", async () => {
    const bounded = await makeEndpoint(t.db, { perCallMax: 50, ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    const reserveBounded = async (idempotencyKey: string) =>
      read(await handleReserve(apiRequest("/api/v1/reservations", { key: service, body: { endpoint: bounded.key, amount: 10, idempotencyKey } }), deps));
    // The service key must be allowed on this endpoint.
    service = (await makeKey(t.db, { endpoints: [endpoint.key, bounded.key], trusted: true })).secret;
    const first = await reserveBounded("k1");
    expect(first.status).toBe(201);
    const id = String(first.body.reservationId);
    const tooMuch = await resolve(id, "settle", { key: service, body: { actual: 51 } });
    expect([tooMuch.status, errorCode(tooMuch)]).toEqual([400, "invalid_actual"]);
    const overrun = await resolve(id, "settle", { key: service, body: { actual: 50 } });
    expect([overrun.status, overrun.body.overrun]).toEqual([200, true]);
    const replay = await reserveBounded("k1");
    expect([replay.status, errorCode(replay), replay.body.state]).toEqual([409, "already_resolved", "settled"]);
    const control = read(
      await handleReserve(apiRequest("/api/v1/reservations", { key: service, body: { endpoint: bounded.key, amount: 1, caller: "a\u0000b" } }), deps),
    );
    // Refused at the strict JSON boundary, before any schema or batch.
    expect([(await control).status, errorCode(await control)]).toEqual([400, "invalid_characters"]);
  });

  it("releases twice harmlessly (200, 200), and a settle after release is 409", async () => {
    const id = await reserveAs(keyA, 6);
    const first = await resolve(id, "release", { key: keyA });
    expect([first.status, first.body.status, first.body.replay]).toEqual([200, "released", false]);
    const second = await resolve(id, "release", { key: keyA, body: {} });
    expect([second.status, second.body.replay]).toEqual([200, true]);
    const settle = await resolve(id, "settle", { key: keyA, body: { actual: 1 } });
    expect([settle.status, errorCode(settle), settle.body.state]).toEqual([409, "already_resolved", "released"]);
  });

  it("refuses a key of account A on account B's reservation (403) and changes nothing; a trusted service may", async () => {
    const id = await reserveAs(keyB, 8);
    const before = await chargeSnapshot(t.db);
    const settle = await resolve(id, "settle", { key: keyA, body: { actual: 0 } });
    expect([settle.status, errorCode(settle)]).toEqual([403, "reservation_forbidden"]);
    const release = await resolve(id, "release", { key: keyA });
    expect([release.status, errorCode(release)]).toEqual([403, "reservation_forbidden"]);
    expect(await chargeSnapshot(t.db)).toBe(before);
    const byService = await resolve(id, "release", { key: service });
    expect([byService.status, byService.body.status]).toEqual([200, "released"]);
  });

  it("answers 404 for an unknown reservation, 400 for a bad id or body, 401 without a key", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000";
    const id = await reserveAs(keyA, 2);
    const before = await chargeSnapshot(t.db);
    const cases: { name: string; id: string; verb: "settle" | "release"; send: Send; status: number; code: string }[] = [
      { name: "unknown id", id: unknown, verb: "settle", send: { key: keyA, body: { actual: 1 } }, status: 404, code: "reservation_not_found" },
      { name: "unknown id release", id: unknown, verb: "release", send: { key: keyA }, status: 404, code: "reservation_not_found" },
      { name: "not a uuid", id: "abc", verb: "release", send: { key: keyA }, status: 400, code: "invalid_reservation_id" },
      { name: "actual missing", id, verb: "settle", send: { key: keyA, body: {} }, status: 400, code: "invalid_amount" },
      { name: "actual -1", id, verb: "settle", send: { key: keyA, body: { actual: -1 } }, status: 400, code: "invalid_amount" },
      { name: "actual '3'", id, verb: "settle", send: { key: keyA, body: { actual: "3" } }, status: 400, code: "invalid_amount" },
      { name: "actual 2.5", id, verb: "settle", send: { key: keyA, body: { actual: 2.5 } }, status: 400, code: "invalid_amount" },
      { name: "release with a field", id, verb: "release", send: { key: keyA, body: { force: true } }, status: 400, code: "unknown_field" },
      { name: "malformed JSON", id, verb: "settle", send: { key: keyA, raw: "{" }, status: 400, code: "invalid_json" },
      { name: "no key", id, verb: "settle", send: { body: { actual: 1 } }, status: 401, code: "missing_api_key" },
    ];
    const seen = [];
    for (const c of cases) {
      const answer = await resolve(c.id, c.verb, c.send);
      seen.push({ name: c.name, status: answer.status, code: errorCode(answer) });
    }
    expect(seen).toEqual(cases.map((c) => ({ name: c.name, status: c.status, code: c.code })));
    expect(await chargeSnapshot(t.db)).toBe(before);
  });

  it("refuses a key not allowed on the reservation's endpoint, even a trusted one", async () => {
    const other = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 10 }] });
    const narrow = (await makeKey(t.db, { endpoints: [other.key], trusted: true })).secret;
    const id = await reserveAs(keyA, 1);
    const held = await counterTotals(t.db, endpoint.ceilingIds[0] ?? 0);
    const answer = await resolve(id, "release", { key: narrow });
    expect([answer.status, errorCode(answer)]).toEqual([403, "endpoint_not_allowed"]);
    expect(await counterTotals(t.db, endpoint.ceilingIds[0] ?? 0)).toEqual(held);
  });
});
