// The HTTP API against the library, in one run on one machine: what a service in another
// repository or language gets, next to what the TypeScript library gets on the same database.
//   npm run bench:http -- [--seconds 5] [--connections 64]
// Uses BENCH_DATABASE_URL, else TEST_DATABASE_URL, else DATABASE_URL (a server; a scratch database
// is created on it and dropped afterwards). Starts `npm run api` on that database as a child
// process (node, no tsx wrapper process, so its CPU is its own) and drives it with wrk (Debian's
// `wrk`, as pgbench is needed for A) over keep-alive connections. Rows: A (pgbench's hot row), the library batched on one and three
// ceilings, HTTP reserve on one and three ceilings (random callers, an idempotency key each),
// settle, a refused call, and a constant answer with no database (the server's own floor). CPU per request is split
// between the API process, Postgres (every process named postgres on this machine) and the load
// generator (this process for the library, wrk for HTTP); a reserve row also prints its mean batch, the requests a database call carried.
// Printed, never asserted.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { type Db, migrateDatabase, openPostgres, resultRows } from "@/db/client";
import { databaseUrl } from "@/db/testing";
import { createApiKey } from "@/lib/api-keys";
import { batcherFor, reserve } from "@/lib/enforcement";
import { drive, machineCpuMicros, makeBenchEndpoint, pgbench, postgresCpuMicros, processCpuMicros, whole } from "./bench/measure";

/**
 * The mean batch of the reserve calls since `since` (the database's clock): every reservation of
 * one call has its transaction's start as created_at, so the calls are the distinct ones. What
 * the API's batcher gets to coalesce, set beside the library's own batches.
 */
async function meanBatch(db: Db, since: string): Promise<number | null> {
  const [row] = resultRows<{ b: number | null }>(
    await db.execute(sql`select count(*)::float8 / nullif(count(distinct created_at), 0) as b from reservations where created_at >= ${since}::timestamptz`),
  );
  return row?.b ?? null;
}

async function databaseNow(db: Db): Promise<string> {
  const [row] = resultRows<{ t: string }>(await db.execute(sql`select clock_timestamp()::text as t`));
  if (!row) throw new Error("no clock");
  return row.t;
}

type Row = {
  path: string;
  ceilings: number | null;
  perSecond: number;
  p50: number;
  p99: number;
  /** Answers other than the expected status (a failure of the row). */
  unexpected: number;
  /** Reservations a database call wrote, on average (reserve rows only). */
  batch?: number | null;
  apiCpuUs: number | null;
  dbCpuUs: number;
  generatorCpuUs: number;
  otherCpuUs: number;
};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === "string") throw new Error("no free port");
  return address.port;
}

type Answer = { status: number; body: string };

/** One request at a time with `node:http`'s client: the health probe while the server starts. */
function call(agent: Agent, port: number, method: string, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ agent, host: "127.0.0.1", port, method, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * One row of HTTP calls driven by wrk (Debian's `wrk`, one thread, `connections` keep-alive
 * connections): the load generator shares the two cores with the server it measures, and wrk, in
 * C, spends a fraction of what a client in Node does. The Node client this bench had (raw sockets,
 * a request written as one string) spent 59-70 µs of CPU a reserve, wrk 22; the API's rate rose by
 * a quarter to a third with the same server (2026-12-07, docs/enforcement.md). `request` is Lua
 * that defines wrk's request(); every answer whose status is not in `expect` is counted. Rate and
 * latency are wrk's; CPU is read from /proc (wrk's own while it runs).
 */
async function wrkRow(port: number, secret: string, apiPid: number | null, seconds: number, connections: number, request: string, expect: number[]) {
  const dir = mkdtempSync(path.join(tmpdir(), "ceilings-wrk-"));
  const script = path.join(dir, "row.lua");
  writeFileSync(
    script,
    `headers = { ["authorization"] = "Bearer ${secret}", ["content-type"] = "application/json" }
local expected = { ${expect.map((s) => `[${s}] = true`).join(", ")} }
bad = 0
local threads = {}
function setup(thread) table.insert(threads, thread) end
function response(status, h, body) if not expected[status] then bad = bad + 1 end end
${request}
function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format('{"requests":%d,"durationUs":%d,"bad":%d,"socket":%d,"p50Us":%d,"p99Us":%d}\\n',
    summary.requests, summary.duration, b, e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end
`,
  );
  const api0 = apiPid === null ? 0 : processCpuMicros(apiPid);
  const db0 = postgresCpuMicros();
  const machine0 = machineCpuMicros();
  const child = spawn("wrk", ["-t", "1", "-c", String(connections), "-d", `${seconds}s`, "-s", script, `http://127.0.0.1:${port}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString("utf8")));
  // wrk's CPU, read while it lives (a process gone has no /proc entry to read).
  let wrkCpu = 0;
  const poll = setInterval(() => {
    if (child.pid) wrkCpu = Math.max(wrkCpu, processCpuMicros(child.pid));
  }, 20);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", resolve);
  }).catch((error: unknown) => {
    throw new Error(`wrk did not run (apt-get install wrk): ${error instanceof Error ? error.message : String(error)}`);
  });
  clearInterval(poll);
  const api = apiPid === null ? 0 : processCpuMicros(apiPid) - api0;
  const db = Math.max(0, postgresCpuMicros() - db0);
  const machine = machineCpuMicros() - machine0;
  rmSync(dir, { recursive: true, force: true });
  const line = out.split("\n").find((l) => l.startsWith('{"requests"'));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${out}`);
  const r = JSON.parse(line) as { requests: number; durationUs: number; bad: number; socket: number; p50Us: number; p99Us: number };
  const n = Math.max(1, r.requests);
  return {
    perSecond: r.requests / (r.durationUs / 1e6),
    p50: r.p50Us / 1000,
    p99: r.p99Us / 1000,
    unexpected: r.bad + r.socket,
    apiCpuUs: apiPid === null ? null : api / n,
    dbCpuUs: db / n,
    generatorCpuUs: wrkCpu / n,
    otherCpuUs: Math.max(0, machine - api - db - wrkCpu) / n,
  };
}

/** Lua for wrk: POST a reservation on `endpoint`, a random caller of 50, an idempotency key of its own unless `keyed` is false. */
function reserveLua(endpoint: string, caller: string | null, keyed: boolean): string {
  const who = caller === null ? `'acct_' .. math.random(0, 49)` : `'${caller}'`;
  return `local n = 0
local prefix = string.format("%x-%x", os.time(), math.random(0, 2147483647))
function request()
  n = n + 1
  local body = '{"endpoint":"${endpoint}","amount":1,"caller":"' .. ${who} .. '"' ${keyed ? `.. ',"idempotencyKey":"' .. prefix .. '-' .. n .. '"'` : ""} .. '}'
  return wrk.format("POST", "/api/v1/reservations", headers, body)
end`;
}

async function startApi(url: string, port: number): Promise<ChildProcess> {
  // BENCH_API_CPU_PROF=dir: the API process writes a V8 CPU profile there as it stops.
  const profile = process.env.BENCH_API_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_API_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, "--import", "tsx", "scripts/api.ts"], {
    env: { ...process.env, DATABASE_URL: url, API_PORT: String(port), API_HOST: "127.0.0.1", NODE_ENV: "production" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const agent = new Agent({ keepAlive: false });
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`npm run api exited with ${child.exitCode}`);
    const ok = await call(agent, port, "GET", "/api/health").then(
      (a) => a.status === 200,
      () => false,
    );
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error("the API server did not answer /api/health within 30 s");
}

async function main(): Promise<void> {
  const seconds = whole("seconds", 5);
  const connections = whole("connections", 64);
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("set BENCH_DATABASE_URL, TEST_DATABASE_URL or DATABASE_URL to a Postgres server");
  const name = `ceilings_bench_http_${Date.now().toString(36)}`;
  const admin = openPostgres(base, { max: 1 });
  await admin.db.execute(sql`create database ${sql.identifier(name)}`);
  const url = databaseUrl(base, name);
  const setup = openPostgres(url, { max: 2 });
  const rows: Row[] = [];
  let api: ChildProcess | undefined;
  let tpsA: number | undefined;
  try {
    await migrateDatabase(setup);
    await setup.db.execute(sql`create table bench_counter (id int primary key, n bigint not null)`);
    await setup.db.execute(sql`insert into bench_counter values (1, 0)`);
    await makeBenchEndpoint(setup.db, "bench.one", 1);
    await makeBenchEndpoint(setup.db, "bench.three", 3);
    // One call a day: every call after the first is refused by the ceiling (and logged).
    await makeBenchEndpoint(setup.db, "bench.full", 1, 1);
    const key = await createApiKey(setup.db, {
      name: "bench",
      binding: { kind: "trusted" },
      endpointKeys: ["bench.one", "bench.three", "bench.full"],
      actor: { type: "system", name: "bench:http" },
    });

    tpsA = pgbench(url, seconds, 64);

    // The library, batched, in this process (as npm run bench:enforcement measures it).
    const pool = openPostgres(url, { max: 2 });
    try {
      // A database in service has statistics on its reservations; this one was created a moment
      // ago and has none. Every session plans reserve_batch's statements once (generic plans), and
      // one planned on a table of a few hundred rows without statistics may probe an idempotency
      // key through the endpoint's history index, a scan of all its reservations, until the table
      // is next analyzed (autovacuum does so within a minute of the first 50 rows). Measured
      // without this: one of the two sessions, at random, took 46-170 ms a batch. So: a second of
      // calls, then the statistics, which make every session plan again.
      await drive(1, connections, async () => {
        const endpoint = Math.random() < 0.5 ? "bench.one" : "bench.three";
        return (
          (await reserve(pool.db, { endpoint, amount: 1, caller: `acct_${Math.floor(Math.random() * 50)}`, idempotencyKey: randomUUID() })).status === "granted"
        );
      });
      await setup.db.execute(sql`analyze reservations, counters`);
      for (const count of [1, 3] as const) {
        const endpoint = count === 1 ? "bench.one" : "bench.three";
        const since = await databaseNow(setup.db);
        const m = await drive(seconds, connections, async () => {
          const d = await reserve(pool.db, { endpoint, amount: 1, caller: `acct_${Math.floor(Math.random() * 50)}`, idempotencyKey: randomUUID() });
          return d.status === "granted";
        });
        rows.push({ path: "library reserve (batched)", ceilings: count, ...m, batch: await meanBatch(setup.db, since) });
      }
    } finally {
      await batcherFor(pool.db).close();
      await pool.close();
    }

    const port = await freePort();
    api = await startApi(url, port);
    const apiPid = api.pid ?? null;
    const row = (request: string, expect: number[], secs = seconds) => wrkRow(port, key.secret, apiPid, secs, connections, request, expect);
    // Warm the connections and the server's code paths (its JIT) before measuring.
    await row(reserveLua("bench.one", "acct_warm", false), [201], 2);
    const httpSince = await databaseNow(setup.db);
    for (const count of [1, 3] as const) {
      const since = await databaseNow(setup.db);
      const m = await row(reserveLua(count === 1 ? "bench.one" : "bench.three", null, true), [201]);
      rows.push({ path: "HTTP POST /api/v1/reservations", ceilings: count, ...m, batch: await meanBatch(setup.db, since) });
    }
    // Settle what the HTTP rows reserved, each reservation once: their ids in a file wrk reads.
    const held = resultRows<{ id: string }>(
      await setup.db.execute(sql`select id from reservations where state = 'held' and created_at >= ${httpSince}::timestamptz order by created_at, id`),
    );
    const ids = path.join(mkdtempSync(path.join(tmpdir(), "ceilings-held-")), "ids");
    writeFileSync(ids, held.map((r) => r.id).join("\n") + "\n");
    const settleMeasured = await row(
      `local ids = {}
for line in io.lines("${ids}") do ids[#ids + 1] = line end
local i = 0
function request()
  i = i + 1
  return wrk.format("POST", "/api/v1/reservations/" .. (ids[i] or "none-left") .. "/settle", headers, '{"actual":1}')
end`,
      [200],
    );
    rmSync(path.dirname(ids), { recursive: true, force: true });
    rows.push({ path: "HTTP POST .../settle", ceilings: null, ...settleMeasured });
    const refused = await row(reserveLua("bench.full", "acct_1", false), [429, 201]);
    rows.push({ path: "HTTP reserve refused (429)", ceilings: 1, ...refused });
    // The server's own floor: a constant answer from its edge (the method table's 204), no
    // database, a few hundred bytes. (The OpenAPI document is about 100 KB: a test of writing.)
    const floor = await row(`function request() return wrk.format("OPTIONS", "/api/v1/reservations", headers) end`, [204]);
    rows.push({ path: "HTTP OPTIONS (constant, no database)", ceilings: null, ...floor });

    const library = (c: number) => rows.find((r) => r.path.startsWith("library") && r.ceilings === c)?.perSecond ?? 0;
    console.log(`\nHTTP API against the library, ${seconds} s a row, ${connections} connections or callers, one database server`);
    console.log(`A: pgbench hot-row guarded UPDATE, 64 clients: ${tpsA ? tpsA.toFixed(0) : "n/a"} tps`);
    const head = ["path", "ceil", "per s", "x lib", "p50 ms", "p99 ms", "bad", "batch", "api µs", "db µs", "gen µs", "other µs"];
    console.log(head.map((h, i) => (i === 0 ? h.padEnd(34) : h.padStart(9))).join(""));
    for (const r of rows) {
      const lib = r.ceilings === 1 || r.ceilings === 3 ? library(r.ceilings) : 0;
      console.log(
        [
          r.path.padEnd(34),
          String(r.ceilings ?? "").padStart(9),
          r.perSecond.toFixed(0).padStart(9),
          (lib > 0 && r.path.startsWith("HTTP POST /api/v1/reservations") ? (r.perSecond / lib).toFixed(2) : "").padStart(9),
          r.p50.toFixed(1).padStart(9),
          r.p99.toFixed(1).padStart(9),
          String(r.unexpected).padStart(9),
          (r.batch === undefined || r.batch === null ? "" : r.batch.toFixed(1)).padStart(9),
          (r.apiCpuUs === null ? "" : r.apiCpuUs.toFixed(0)).padStart(9),
          r.dbCpuUs.toFixed(0).padStart(9),
          r.generatorCpuUs.toFixed(0).padStart(9),
          r.otherCpuUs.toFixed(0).padStart(9),
        ].join(""),
      );
    }
    console.log();
    const round = (v: number) => Math.round(v * 100) / 100;
    for (const r of rows) {
      console.log(
        JSON.stringify({
          bench: "http",
          at: new Date().toISOString(),
          aTps: tpsA ?? null,
          path: r.path,
          ceilings: r.ceilings,
          connections,
          perSecond: round(r.perSecond),
          p50Ms: round(r.p50),
          p99Ms: round(r.p99),
          unexpected: r.unexpected,
          meanBatch: r.batch === undefined || r.batch === null ? null : round(r.batch),
          apiCpuUsPerRequest: r.apiCpuUs === null ? null : round(r.apiCpuUs),
          dbCpuUsPerRequest: round(r.dbCpuUs),
          generatorCpuUsPerRequest: round(r.generatorCpuUs),
          otherCpuUsPerRequest: round(r.otherCpuUs),
        }),
      );
    }
  } finally {
    if (api && api.exitCode === null) {
      api.kill("SIGTERM");
      await new Promise((r) => api?.once("exit", r));
    }
    await setup.close();
    await admin.db.execute(sql`drop database if exists ${sql.identifier(name)} with (force)`);
    await admin.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
