import { beforeAll, describe, expect, it } from "vitest";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { handleSubscribe } from "@/lib/demo/subscribe-handler";
import { createFakeProvider } from "@/lib/demo/fake-provider";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { MAX_JSON_DEPTH } from "@/lib/http/strict-json";
import type { ApiDeps } from "./deps";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";
import { apiRequest, chargeSnapshot, errorCode, makeKey, read } from "./test-support";

// Every route that reads a JSON body answers a deeply nested one with a clean 400 naming the
// limit (or 413 when it is over the size cap first), never a 500: 8,000 levels of "[" used to
// overflow the stack of the control-character walk, an empty 500 from POST /api/v1/reservations.

const arrays = (n: number) => "[".repeat(n) + "]".repeat(n);
const objects = (n: number) => '{"":'.repeat(n) + "1" + "}".repeat(n);
const inField = (n: number) => `{"endpoint":"e","amount":1,"caller":${arrays(n)}}`;

describe.skipIf(skipWithoutDatabase())("deeply nested JSON bodies on every route that reads one", () => {
  const t = useTestDatabase("api_json_depth", { max: 4 });
  const deps: ApiDeps = { db: async () => t.db };
  let key: string;
  let id: string;
  let endpointKey: string;

  beforeAll(async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    endpointKey = e.key;
    key = (await makeKey(t.db, { endpoints: [e.key], account: "acct_deep" })).secret;
    const granted = await read(await handleReserve(apiRequest("/api/v1/reservations", { key, body: { endpoint: e.key, amount: 1 } }), deps));
    id = String(granted.body.reservationId);
  });

  const routes = () =>
    [
      ["POST /api/v1/reservations", (raw: string) => handleReserve(apiRequest("/api/v1/reservations", { key, raw }), deps)],
      [
        "POST /api/v1/reservations/{id}/settle",
        (raw: string) => handleResolve(apiRequest(`/api/v1/reservations/${id}/settle`, { key, raw }), id, "settle", deps),
      ],
      [
        "POST /api/v1/reservations/{id}/release",
        (raw: string) => handleResolve(apiRequest(`/api/v1/reservations/${id}/release`, { key, raw }), id, "release", deps),
      ],
    ] as const;

  it("answers 8,000 levels of arrays, 3,000 of objects and a deep field value with 400 nesting_too_deep, charging nothing", async () => {
    const before = await chargeSnapshot(t.db);
    for (const [name, send] of routes()) {
      for (const raw of [arrays(8_000), objects(3_000), inField(5_000), arrays(MAX_JSON_DEPTH + 1)]) {
        expect(raw.length, "fits the 16 KiB cap, so the depth check is what answers").toBeLessThanOrEqual(16 * 1024);
        const answer = await read(await send(raw));
        expect([name, raw.length, answer.status, errorCode(answer)]).toEqual([name, raw.length, 400, "nesting_too_deep"]);
        expect(answer.body.error).toEqual({
          code: "nesting_too_deep",
          message: `the request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
        });
      }
      // 100,000 levels is 200 KB: over the size cap, which is checked first.
      for (const raw of [arrays(100_000), objects(100_000)]) {
        const answer = await read(await send(raw));
        expect([name, answer.status, errorCode(answer)]).toEqual([name, 413, "body_too_large"]);
      }
    }
    expect(await chargeSnapshot(t.db)).toBe(before);
    // The reservation is still held: none of it reached settle or release.
    const settled = await read(await handleResolve(apiRequest(`/api/v1/reservations/${id}/settle`, { key, body: { actual: 1 } }), id, "settle", deps));
    expect(settled.status).toBe(200);
  });

  it("the demo subscribe route answers a deep body with 400 nesting_too_deep too", async () => {
    const answer = await handleSubscribe(
      new Request("http://127.0.0.1/api/demo/subscribe", { method: "POST", headers: { "content-type": "application/json" }, body: arrays(1_000) }),
      {
        db: async () => t.db,
        provider: createFakeProvider({ latencyMs: 0, failureRate: 0 }),
        minMs: 0,
        defer: () => undefined,
        log: () => undefined,
        endpoint: endpointKey,
      },
    );
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("nesting_too_deep");
  });
});
