// The HTTP API against the library, in one run on one machine: what a service in another
// repository or language gets, next to what the TypeScript library gets on the same database.
//   npm run bench:http -- [--seconds 5] [--connections 64]
// Uses BENCH_DATABASE_URL, else TEST_DATABASE_URL, else DATABASE_URL (a server; a scratch database
// is created on it and dropped afterwards). Starts `npm run api` on that database as a child
// process (node, no tsx wrapper process, so its CPU is its own) and drives it from this process
// over keep-alive connections. Rows: A (pgbench's hot row), the library batched on one and three
// ceilings, HTTP reserve on one and three ceilings (random callers, an idempotency key each),
// settle, a refused call, and a constant answer with no database (the server's own floor). CPU per request is split
// between the API process, Postgres (every process named postgres on this machine) and this
// load generator; a reserve row also prints its mean batch, the requests a database call carried.
// Printed, never asserted.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Agent, request as httpRequest } from "node:http";
import { connect, createServer, type Socket } from "node:net";
import { sql } from "drizzle-orm";
import { type Db, migrateDatabase, openPostgres, resultRows } from "@/db/client";
import { databaseUrl } from "@/db/testing";
import { createApiKey } from "@/lib/api-keys";
import { batcherFor, reserve } from "@/lib/enforcement";
import { drive, makeBenchEndpoint, pgbench, whole } from "./bench/measure";

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
 * The load generator's connections: keep-alive sockets that write a request as one string and
 * read the answer by its content-length (the API server always sends one), as wrk does. Node's
 * own client (an Agent, a ClientRequest and an IncomingMessage a call) spent 44 µs of this
 * process's CPU a request on the constant OPTIONS answer and 77-80 on a reserve, on the same
 * two cores as the server it measures: the rate it printed was partly its own.
 */
class Connections {
  private readonly idle: Socket[] = [];
  private readonly waiting = new Map<Socket, { resolve: (a: Answer) => void; reject: (e: Error) => void; buffer: Buffer }>();

  constructor(
    private readonly port: number,
    private readonly headers: string,
  ) {}

  async send(method: string, path: string, body?: string): Promise<Answer> {
    const socket = this.idle.pop() ?? (await this.open());
    const head = `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${this.headers}`;
    const request = body === undefined ? `${head}\r\n` : `${head}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const answer = new Promise<Answer>((resolve, reject) => this.waiting.set(socket, { resolve, reject, buffer: Buffer.alloc(0) }));
    socket.write(request);
    const a = await answer;
    this.idle.push(socket);
    return a;
  }

  close(): void {
    for (const socket of this.idle.splice(0)) socket.destroy();
  }

  private open(): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: "127.0.0.1", port: this.port, noDelay: true }, () => resolve(socket));
      socket.on("error", (error) => {
        reject(error);
        this.waiting.get(socket)?.reject(error);
      });
      socket.on("data", (chunk: Buffer) => this.read(socket, chunk));
      // A connection the server closed (its keep-alive timeout between rows) is not used again.
      socket.on("close", () => {
        const at = this.idle.indexOf(socket);
        if (at >= 0) this.idle.splice(at, 1);
        this.waiting.get(socket)?.reject(new Error("the API server closed a connection"));
      });
    });
  }

  private read(socket: Socket, chunk: Buffer): void {
    const w = this.waiting.get(socket);
    if (!w) return void socket.destroy(new Error("the API server sent bytes no request asked for"));
    w.buffer = w.buffer.length === 0 ? chunk : Buffer.concat([w.buffer, chunk]);
    const end = w.buffer.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = w.buffer.toString("latin1", 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) return void socket.destroy(new Error(`an answer without content-length: ${head}`));
    const total = end + 4 + Number(length[1]);
    if (w.buffer.length < total) return;
    if (w.buffer.length > total) return void socket.destroy(new Error("the API server sent more than one answer"));
    this.waiting.delete(socket);
    w.resolve({ status: Number(head.slice(9, 12)), body: w.buffer.toString("utf8", end + 4) });
  }
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
    const client = new Connections(port, `authorization: Bearer ${key.secret}\r\n`);
    const held: string[] = [];
    // Warm the connections and the server's code paths (its JIT) before measuring.
    await drive(
      2,
      connections,
      async () => {
        const body = JSON.stringify({ endpoint: "bench.one", amount: 1, caller: "acct_warm" });
        return (await client.send("POST", "/api/v1/reservations", body)).status === 201;
      },
      apiPid,
    );

    for (const count of [1, 3] as const) {
      const endpoint = count === 1 ? "bench.one" : "bench.three";
      const since = await databaseNow(setup.db);
      const m = await drive(
        seconds,
        connections,
        async () => {
          const body = JSON.stringify({ endpoint, amount: 1, caller: `acct_${Math.floor(Math.random() * 50)}`, idempotencyKey: randomUUID() });
          const a = await client.send("POST", "/api/v1/reservations", body);
          if (a.status === 201) held.push((JSON.parse(a.body) as { reservationId: string }).reservationId);
          return a.status === 201;
        },
        apiPid,
      );
      rows.push({ path: "HTTP POST /api/v1/reservations", ceilings: count, ...m, batch: await meanBatch(setup.db, since) });
    }
    const settleMeasured = await drive(
      seconds,
      connections,
      async () => {
        const id = held.pop();
        if (!id) return false;
        const a = await client.send("POST", `/api/v1/reservations/${id}/settle`, JSON.stringify({ actual: 1 }));
        return a.status === 200;
      },
      apiPid,
    );
    rows.push({ path: "HTTP POST .../settle", ceilings: null, ...settleMeasured });
    const refused = await drive(
      seconds,
      connections,
      async () => {
        const a = await client.send("POST", "/api/v1/reservations", JSON.stringify({ endpoint: "bench.full", amount: 1, caller: "acct_1" }));
        return a.status === 429 || a.status === 201;
      },
      apiPid,
    );
    rows.push({ path: "HTTP reserve refused (429)", ceilings: 1, ...refused });
    // The server's own floor: a constant answer from its edge (the method table's 204), no
    // database, a few hundred bytes. (The OpenAPI document is about 100 KB: a test of writing.)
    const floor = await drive(seconds, connections, async () => (await client.send("OPTIONS", "/api/v1/reservations")).status === 204, apiPid);
    rows.push({ path: "HTTP OPTIONS (constant, no database)", ceilings: null, ...floor });
    client.close();

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
