import { Agent, request } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningApiServer, startApiServer } from "@/app/api/v1/_lib/api-server";
import { makeKey } from "@/app/api/v1/_lib/test-support";
import { type Database, openPostgres } from "@/db/client";
import { CuttableProxy } from "@/db/cuttable-proxy";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { authenticateApiKey } from "./authenticate";
import { ApiKeyCache } from "./cache";
import { revokeApiKey } from "./revoke";

// API keys cached in the process stay exact: a revocation binds every API server's next requests
// while they are under load, and a cache whose LISTEN connection goes silent stops answering and
// reads every key from the database instead.

const actor = { type: "system" as const, name: "test" };

function post(agent: Agent, url: string, secret: string, body: unknown): Promise<number> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/v1/reservations`,
      {
        agent,
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

describe.skipIf(skipWithoutDatabase())("the API key cache", () => {
  const t = useTestDatabase("api_key_cache", { max: 6 });
  const opened: Database[] = [];
  const caches: ApiKeyCache[] = [];
  const servers: RunningApiServer[] = [];
  const open = (url: string, max = 4) => {
    const d = openPostgres(url, { max });
    opened.push(d);
    return d;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(caches.map((c) => c.close()));
    await Promise.all(opened.map((d) => d.close()));
  });

  it("binds a revocation on two API servers under load within milliseconds of its commit", async () => {
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 1_000_000 }] });
    const key = await makeKey(t.db, { endpoints: [e.key], trusted: true });
    // Two servers as two processes would have them: pools, batchers and caches of their own.
    for (let i = 0; i < 2; i++) {
      const keys = await ApiKeyCache.start(open(t.url, 2).db);
      caches.push(keys);
      const enforcement = open(t.url, 4).db;
      servers.push(await startApiServer({ deps: { db: async () => enforcement, keys }, port: 0, host: "127.0.0.1" }));
    }
    await new Promise((r) => setTimeout(r, 300)); // the caches hear their first pings
    const log: { server: number; sentAt: number; status: number }[] = [];
    let stop = false;
    const agents = servers.map(() => new Agent({ keepAlive: true, maxSockets: 16 }));
    const loops = servers.flatMap((s, server) =>
      Array.from({ length: 16 }, async () => {
        while (!stop) {
          const sentAt = performance.now();
          const status = await post(agents[server] ?? new Agent(), s.url, key.secret, { endpoint: e.key, amount: 1, caller: "acct_load" });
          log.push({ server, sentAt, status });
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(caches.map((c) => c.trusted && c.stats.hits > 10)).toEqual([true, true]);
    await revokeApiKey(t.db, { id: key.id, actor });
    const revokedAt = performance.now();
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(loops);
    agents.forEach((a) => a.destroy());

    const before = log.filter((l) => l.sentAt < revokedAt);
    const after = log.filter((l) => l.sentAt >= revokedAt);
    expect(before.length).toBeGreaterThan(20);
    expect(after.length).toBeGreaterThan(20);
    const lastGrantLagMs = Math.max(0, ...after.filter((l) => l.status === 201).map((l) => l.sentAt - revokedAt));
    console.log(`revocation: ${before.length} calls before, ${after.length} after; last grant sent ${lastGrantLagMs.toFixed(1)} ms after the revoke returned`);
    // Sent after the revoke returned, a call is refused on both servers; the notification may
    // trail the commit by its delivery, so a grant sent in the first 50 ms is tolerated.
    expect(after.filter((l) => l.sentAt - revokedAt > 50 && l.status !== 401)).toEqual([]);
    expect(new Set(after.filter((l) => l.status === 401).map((l) => l.server))).toEqual(new Set([0, 1]));
  }, 30_000);

  it("stops answering from memory when its LISTEN connection goes silent, so a revocation still binds", async () => {
    const server = new URL(t.url);
    const proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const via = new URL(t.url);
    via.hostname = "127.0.0.1";
    via.port = String(await proxy.listen());
    const lookups = open(t.url, 2).db;
    const listening = openPostgres(via.toString(), { max: 1 });
    try {
      const cache = await ApiKeyCache.start(lookups, { pingMs: 50, staleMs: 300, listenDb: listening.db });
      const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 10 }] });
      const key = await makeKey(t.db, { endpoints: [e.key], account: "acct_cut" });
      await new Promise((r) => setTimeout(r, 200));
      expect(cache.trusted).toBe(true);
      const auth = () => authenticateApiKey(lookups, `Bearer ${key.secret}`, new Date(), cache);
      expect(await auth()).toMatchObject({ ok: true });
      const hits = cache.stats.hits;
      expect(await auth()).toMatchObject({ ok: true });
      expect(cache.stats.hits).toBe(hits + 1);

      // The LISTEN connection goes silent: its notifications, the revocation's too, never arrive.
      proxy.silence();
      await revokeApiKey(t.db, { id: key.id, actor });
      await new Promise((r) => setTimeout(r, 450));
      expect(cache.trusted).toBe(false);
      const reads = cache.stats.reads;
      expect(await auth()).toMatchObject({ ok: false, code: "revoked_api_key" });
      expect(cache.stats.reads).toBe(reads + 1);
      // Healed, it listens afresh on a new connection and answers from memory again.
      proxy.heal();
      const healedAt = performance.now();
      while (!cache.trusted && performance.now() - healedAt < 10_000) await new Promise((r) => setTimeout(r, 50));
      expect(cache.trusted).toBe(true);
      await cache.close();
    } finally {
      await listening.destroy?.();
      proxy.heal();
      await proxy.close();
    }
  }, 30_000);

  it("shares one key read among lookups while it is not trusted, but never a read that began staleMs or more before", async () => {
    const server = new URL(t.url);
    // Every read takes at least 400 ms: each chunk is 200 ms late both ways, once the connections
    // are open (a password handshake, as the embedded PostgreSQL 17 asks, would pass the deadline).
    const proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const via = new URL(t.url);
    via.hostname = "127.0.0.1";
    via.port = String(await proxy.listen());
    const slow = openPostgres(via.toString(), { max: 2 });
    let cache: ApiKeyCache | undefined;
    try {
      // No ping within the test: never trusted, so every lookup goes to the database.
      cache = await ApiKeyCache.start(slow.db, { pingMs: 60_000, staleMs: 300, listenDb: open(t.url, 1).db });
      const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 10 }] });
      const key = await makeKey(t.db, { endpoints: [e.key], account: "acct_shared" });
      const auth = () => authenticateApiKey(slow.db, `Bearer ${key.secret}`, new Date(), cache);
      // Both lookup lanes opened (two keys read at once), then the path turns slow.
      const other = await makeKey(t.db, { endpoints: [e.key], account: "acct_other" });
      await Promise.all([auth(), authenticateApiKey(slow.db, `Bearer ${other.secret}`, new Date(), cache)]);
      await new Promise((r) => setTimeout(r, 350));
      proxy.delayMs = 200;
      const warm = cache.stats.reads;
      const answers = await Promise.all(Array.from({ length: 20 }, auth));
      expect(answers.every((a) => a.ok)).toBe(true);
      expect([cache.trusted, cache.stats.reads - warm]).toEqual([false, 1]);
      // A lookup 350 ms into a read (staleMs is 300) reads afresh: the read may predate a revoke.
      const first = auth();
      await new Promise((r) => setTimeout(r, 350));
      const second = auth();
      const reads = cache.stats.reads - warm;
      await Promise.all([first, second]);
      expect(reads).toBe(3);
      await revokeApiKey(t.db, { id: key.id, actor });
      expect(await auth()).toMatchObject({ ok: false, code: "revoked_api_key" });
    } finally {
      await cache?.close();
      await slow.destroy?.();
      await proxy.close();
    }
  }, 30_000);

  it("does not let a slow LISTEN connection stretch a revocation: trusted only while its own pings come back in time", async () => {
    const server = new URL(t.url);
    // Every notification reaches this cache 600 ms late: twice its staleMs.
    const proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port || 5432) }, 600);
    const via = new URL(t.url);
    via.hostname = "127.0.0.1";
    via.port = String(await proxy.listen());
    const lookups = open(t.url, 2).db;
    const listening = openPostgres(via.toString(), { max: 1 });
    let cache: ApiKeyCache | undefined;
    try {
      cache = await ApiKeyCache.start(lookups, { pingMs: 50, staleMs: 300, listenDb: listening.db });
      const e = await makeEndpoint(t.db, { ceilings: [{ metric: "calls", scope: "global", window: "utc_day", value: 10 }] });
      const key = await makeKey(t.db, { endpoints: [e.key], account: "acct_slow" });
      const auth = () => authenticateApiKey(lookups, `Bearer ${key.secret}`, new Date(), cache);
      await new Promise((r) => setTimeout(r, 1500));
      if (!cache) throw new Error("no cache");
      // Pings keep arriving, but each was sent 600 ms before: never fresh enough to trust.
      expect(cache.trusted).toBe(false);
      expect(await auth()).toMatchObject({ ok: true });
      await revokeApiKey(t.db, { id: key.id, actor });
      expect(await auth()).toMatchObject({ ok: false, code: "revoked_api_key" });
      expect(cache.stats.hits).toBe(0);
    } finally {
      await cache?.close();
      await listening.destroy?.();
      await proxy.close();
    }
  }, 30_000);
});
