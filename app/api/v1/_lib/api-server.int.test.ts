import { Agent, request } from "node:http";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openPostgres, resultRows } from "@/db/client";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { ApiKeyCache } from "@/lib/api-keys";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { openApiDocument } from "@/lib/http";
import { type RunningApiServer, startApiServer } from "./api-server";
import { makeKey } from "./test-support";

// The API server (npm run api) over real HTTP: the edge proxy.ts gives the dashboard's routes
// (URL check, method table, security headers) and the routes themselves, and pools that cannot
// starve each other: reserves, settles and key lookups at once never answer 503.

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

function send(agent: Agent, url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const all = body === undefined ? headers : { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
    // The path goes out as written (a URL would fold "\\" into "/" before it is sent).
    const { hostname, port } = new URL(url);
    const req = request({ agent, host: hostname, port, path, method, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe.skipIf(skipWithoutDatabase())("the API server", () => {
  const t = useTestDatabase("api_server", { max: 4 });
  let enforcement: Database;
  let keysPool: Database;
  let keys: ApiKeyCache;
  let api: RunningApiServer;
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });

  beforeAll(async () => {
    // The pools of `npm run api`: enforcement statements bounded, keys on a pool of their own.
    enforcement = openPostgres(t.url, {
      max: 8,
      connectTimeoutSeconds: 2,
      connection: { statement_timeout: 1500, lock_timeout: 1000, idle_in_transaction_session_timeout: 10_000 },
    });
    keysPool = openPostgres(t.url, { max: 4 });
    keys = await ApiKeyCache.start(keysPool.db);
    api = await startApiServer({ deps: { db: async () => enforcement.db, keys }, port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    agent.destroy();
    await api?.close();
    await keys?.close();
    await Promise.all([enforcement?.close(), keysPool?.close()]);
  });

  it("answers the edge as the dashboard's routes do: health, HEAD, the document, 404, 405 with Allow, 400 for a broken URL", async () => {
    const health = await send(agent, api.url, "GET", "/api/health");
    expect(health).toMatchObject({ status: 200, body: JSON.stringify({ status: "ok", refusalLogFailures: 0 }) });
    expect(health.headers["x-content-type-options"]).toBe("nosniff");
    expect(await send(agent, api.url, "HEAD", "/api/health")).toMatchObject({ status: 200, body: "" });
    const doc = await send(agent, api.url, "GET", "/api/v1/openapi.json");
    expect(JSON.parse(doc.body)).toEqual(openApiDocument());
    const unknown = await send(agent, api.url, "GET", "/api/v1/nope");
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ error: { code: "not_found" } });
    expect((await send(agent, api.url, "GET", "/endpoints")).status).toBe(404);
    for (const method of ["PUT", "DELETE", "PATCH", "GET", "TRACE"]) {
      const refused = await send(agent, api.url, method, "/api/v1/reservations");
      expect({ method, status: refused.status, allow: refused.headers.allow }).toEqual({ method, status: 405, allow: "OPTIONS, POST" });
    }
    expect(await send(agent, api.url, "OPTIONS", "/api/v1/reservations")).toMatchObject({ status: 204, headers: { allow: "OPTIONS, POST" } });
    const broken = await send(agent, api.url, "GET", "/api/v1/endpoints/%E0%A4%A");
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body)).toMatchObject({ error: { code: "invalid_input" } });
    const noKey = await send(agent, api.url, "POST", "/api/v1/reservations", {}, JSON.stringify({ endpoint: "x", amount: 1 }));
    expect(noKey).toMatchObject({ status: 401, headers: { "www-authenticate": 'Bearer realm="ceilings"' } });
  });

  it("reads only plain paths, never the Host header, and serves nothing outside /api", async () => {
    // A path a proxy in front would read as another one: refused, not served.
    for (const path of ["//evil.example/api/v1/reservations", "/api\\v1\\reservations", "/api/./health", "/api/v1/../health", "/api/%2e%2e/api/health"]) {
      const answer = await send(agent, api.url, "POST", path, {}, "{}");
      expect({ path, status: answer.status, code: (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code }).toEqual({
        path,
        status: 400,
        code: "invalid_input",
      });
    }
    // The absolute form of a request target (RFC 9112) names the same resource.
    expect((await send(agent, api.url, "GET", "http://api.example/api/health")).status).toBe(200);
    for (const method of ["GET", "PUT", "OPTIONS"]) expect((await send(agent, api.url, method, "/nothing")).status).toBe(404);
    // The Host header is the client's to write: it is neither the URL's host nor its query.
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "caller", window: "utc_day", value: 10 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    const status = await send(agent, api.url, "GET", `/api/v1/endpoints/${e.key}`, { authorization: `Bearer ${key.secret}`, host: "x?caller=%ZZ#" });
    expect(status.status).toBe(200);
    expect(JSON.parse(status.body)).toMatchObject({ account: null });
    expect((await send(agent, api.url, "GET", "/api/health", { host: "a b" })).status).toBe(200);
  });

  it("keeps 64 reserving and 64 settling connections going for 20 s without a single 503", async () => {
    const e = await makeEndpoint(t.db, {
      ceilings: [
        { metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000 },
        { metric: "calls", scope: "global", window: "utc_day", value: 1_000_000_000 },
        { metric: "units", scope: "caller", window: "utc_day", value: 1_000_000_000 },
      ],
    });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    const auth = { authorization: `Bearer ${key.secret}` };
    const held: string[] = [];
    const statuses = new Map<string, number>();
    const count = (what: string) => statuses.set(what, (statuses.get(what) ?? 0) + 1);
    const until = performance.now() + 20_000;
    const reservers = Array.from({ length: 64 }, async (_, i) => {
      while (performance.now() < until) {
        const body = JSON.stringify({ endpoint: e.key, amount: 2, caller: `acct_${i % 16}`, idempotencyKey: `k_${i}_${performance.now()}` });
        const a = await send(agent, api.url, "POST", "/api/v1/reservations", auth, body);
        count(`reserve ${a.status}`);
        if (a.status === 201) held.push((JSON.parse(a.body) as { reservationId: string }).reservationId);
      }
    });
    const settlers = Array.from({ length: 64 }, async () => {
      while (performance.now() < until) {
        const id = held.shift();
        if (!id) {
          await new Promise((r) => setTimeout(r, 2));
          continue;
        }
        const a = await send(agent, api.url, "POST", `/api/v1/reservations/${id}/settle`, auth, JSON.stringify({ actual: 1 }));
        count(`settle ${a.status}`);
      }
    });
    await Promise.all([...reservers, ...settlers]);
    const seen = Object.fromEntries(statuses);
    console.log(`20 s of 64 reserving and 64 settling connections: ${JSON.stringify(seen)}`);
    expect(Object.keys(seen).sort()).toEqual(["reserve 201", "settle 200"]);
    expect(seen["reserve 201"]).toBeGreaterThan(500);
    expect(seen["settle 200"]).toBeGreaterThan(500);
    // The books: every grant is held or settled, with the settled ones at their actual.
    const [books] = resultRows<{ held: string; settled: string; n: string }>(
      await t.db.execute(sql`
        select count(*) filter (where state = 'held') as held, count(*) filter (where state = 'settled') as settled, count(*) as n
        from reservations where endpoint_id = ${e.endpointId}`),
    );
    expect(Number(books?.n)).toBe(seen["reserve 201"]);
    expect(Number(books?.settled)).toBe(seen["settle 200"]);
  }, 60_000);
});
