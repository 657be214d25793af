import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { reserve } from "@/lib/enforcement";
import { priceEndpoint } from "@/lib/enforcement/budget-fixtures";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import type { ApiDeps } from "./deps";
import { handleReserve } from "./reserve-handler";
import { apiRequest, errorCode, makeKey, read } from "./test-support";

// One caller, one string, on every path: the HTTP API (its whole edge, the body's boundary
// checks included), the TypeScript library and SQL trim the same Unicode whitespace off a caller
// (\v, \f and U+0085 among it) and charge the same account, or all refuse it. Each variant goes
// through the three paths at once, on separate connections.

const SAME_ACCOUNT = ["acct", "acct ", " acct\t", "acct\u000b", "\u000cacct", "acct\u0085", "\u00a0acct\u3000", "acct\r\n", "\ufeffacct\u2003"];
const REFUSED = ["ac\u000bct", "a\u0085b", "a\u0000b", "a\u001bb", " ", "\u000b\u0085", "a\ud800", "\udc00a"];

describe.skipIf(skipWithoutDatabase())("a caller is one account on every path", () => {
  const t = useTestDatabase("caller_paths", { max: 8 });
  const deps: ApiDeps = { db: async () => t.db };

  async function sqlReserve(endpoint: string, caller: string, idempotencyKey: string | null = null) {
    const rows = resultRows<{ result: { status: string; reservationId?: string; code?: string; replay?: boolean } }>(
      await t.db.execute(sql`select ceilings.reserve(${endpoint}, 1, ${caller}, null, ${idempotencyKey}) as result`),
    );
    return rows[0]?.result;
  }

  it("trims a caller's edge whitespace to the same account through HTTP, the library and SQL", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "caller", window: "utc_day", value: 1000 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    const outcomes = await Promise.all(
      SAME_ACCOUNT.map(async (caller) => {
        const [http, lib, viaSql] = await Promise.all([
          read(await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, amount: 1, caller } }), deps)),
          reserve(t.db, { endpoint: e.key, amount: 1, caller }),
          sqlReserve(e.key, caller),
        ]);
        return { caller, http: http.status, lib: lib.status, sql: viaSql?.status };
      }),
    );
    expect(outcomes).toEqual(SAME_ACCOUNT.map((caller) => ({ caller, http: 201, lib: "granted", sql: "granted" })));
    const callers = resultRows<{ caller: string; n: string }>(
      await t.db.execute(sql`select r.caller, count(*) as n from reservations r where r.endpoint_id = ${e.endpointId} group by 1`),
    );
    expect(callers.map((c) => ({ caller: c.caller, n: Number(c.n) }))).toEqual([{ caller: "acct", n: SAME_ACCOUNT.length * 3 }]);
  });

  it("refuses a caller with a control character inside, or nothing but whitespace, on every path", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "caller", window: "utc_day", value: 1000 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    for (const caller of REFUSED) {
      const http = await read(await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, amount: 1, caller } }), deps));
      expect({ caller, status: http.status, code: errorCode(http) }).toMatchObject({ caller, status: 400 });
      // The library throws its input error. In SQL a blank caller is no caller (NULL), and a NUL
      // cannot be sent at all (Postgres text refuses it before any function runs).
      await expect(reserve(t.db, { endpoint: e.key, amount: 1, caller }), JSON.stringify(caller)).rejects.toThrow();
      const blank = caller.replace(/[\s\u0085]/g, "") === "";
      // Nor a lone surrogate: no UTF-8 text can hold one.
      if (!blank && !caller.includes("\u0000") && !/[\ud800-\udfff]/.test(caller))
        expect((await sqlReserve(e.key, caller))?.status, JSON.stringify(caller)).toBe("error");
    }
    const [row] = resultRows<{ n: string }>(await t.db.execute(sql`select count(*) as n from reservations where endpoint_id = ${e.endpointId}`));
    expect(Number(row?.n)).toBe(0);
  });

  it("refuses a part no endpoint can name (__proto__, which a zod record would drop) on every path, and keeps a part named constructor", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1000 }] });
    await priceEndpoint(t.db, e.endpointId, { constructor: 1_000_000, output: 2_000_000 });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    // JSON.parse makes "__proto__" an own key, as a request body from any language does.
    const sneaky = JSON.parse('{"constructor": 1, "output": 1, "__proto__": 5}') as Record<string, number>;
    const http = await read(
      await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, parts: sneaky, caller: "acct" } }), deps),
    );
    expect(http).toMatchObject({ status: 400, body: { error: { code: "invalid_input", message: expect.stringContaining("parts.__proto__") } } });
    await expect(reserve(t.db, { endpoint: e.key, parts: sneaky, caller: "acct" })).rejects.toThrow(/parts\.__proto__/);
    const viaSql = resultRows<{ result: { status: string; code?: string; message?: string } }>(
      await t.db.execute(sql`select ceilings.reserve(${e.key}, null, 'acct', parts => ${JSON.stringify(sneaky)}::jsonb) as result`),
    )[0]?.result;
    expect(viaSql).toMatchObject({ status: "error", code: "invalid_parts", message: expect.stringContaining("parts.__proto__") });
    // constructor is a part's name like any other: kept on every path.
    const parts = { constructor: 3, output: 4 };
    const granted = await Promise.all([
      read(await handleReserve(apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, parts, caller: "acct" } }), deps)),
      reserve(t.db, { endpoint: e.key, parts, caller: "acct" }),
    ]);
    expect(granted.map((g) => g.status)).toEqual([201, "granted"]);
    const stored = resultRows<{ parts: Record<string, number> }>(await t.db.execute(sql`select parts from reservations where endpoint_id = ${e.endpointId}`));
    expect(stored.map((r) => r.parts)).toEqual([parts, parts]);
  });

  it("takes an idempotency key as sent on every path, so a retry through another path replays", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 1000 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    const first = await reserve(t.db, { endpoint: e.key, amount: 1, caller: "acct", idempotencyKey: " order-7 " });
    expect(first).toMatchObject({ status: "granted", replay: false });
    const http = await read(
      await handleReserve(
        apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, amount: 1, caller: "acct", idempotencyKey: " order-7 " } }),
        deps,
      ),
    );
    expect(http).toMatchObject({ status: 200, body: { replay: true, reservationId: first.status === "granted" ? first.reservationId : "" } });
    expect(await sqlReserve(e.key, "acct", " order-7 ")).toMatchObject({ status: "granted", replay: true });
    // Trimmed, it is another key: a new reservation, on every path alike.
    const other = await read(
      await handleReserve(
        apiRequest("/api/v1/reservations", { key: key.secret, body: { endpoint: e.key, amount: 1, caller: "acct", idempotencyKey: "order-7" } }),
        deps,
      ),
    );
    expect(other).toMatchObject({ status: 201, body: { replay: false } });
  });
});
