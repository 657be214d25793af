// Measures the reservation hot path against the database's own limit on one hot row.
// Prints ratios measured in one run on this machine; nothing here is asserted by a test.
//   npm run bench:enforcement -- [--seconds 8] [--callers 64] [--in-flight 4] [--max-batch 64]
// Uses BENCH_DATABASE_URL, else TEST_DATABASE_URL, else DATABASE_URL (a server; a scratch database
// is created on it and dropped afterwards).
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { type Db, migrateDatabase, openPostgres } from "@/db/client";
import { ceilings, endpoints } from "@/db/schema";
import { databaseUrl } from "@/db/testing";
import { batcherFor, reserve } from "@/lib/enforcement";
import { metrics } from "@/lib/metrics";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive whole number`);
  return v;
}

type Run = { label: string; ops: number; p50: number; p99: number };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function drive(label: string, seconds: number, callers: number, op: () => Promise<unknown>): Promise<Run> {
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await op();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { label, ops: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function makeEndpoint(db: Db, key: string, ceilingsSpec: "one" | "three"): Promise<void> {
  const [e] = await db.insert(endpoints).values({ key, name: key, unit: "units", perCallMax: 1000 }).returning();
  if (!e) throw new Error("no endpoint");
  const big = 1_000_000_000_000;
  const specs: { metric: "units" | "calls"; scope: "global" | "caller" }[] = [{ metric: "units", scope: "global" }];
  if (ceilingsSpec === "three") specs.push({ metric: "calls", scope: "global" }, { metric: "units", scope: "caller" });
  await db.insert(ceilings).values(
    specs.map((s) => ({ ...s, endpointId: e.id, window: "utc_day" as const, value: big, maxValue: big, defaultValue: big })),
  );
}

function pgbench(url: string, seconds: number, clients: number): number | undefined {
  const u = new URL(url);
  const script = path.join(mkdtempSync(path.join(tmpdir(), "ceilings-bench-")), "hot-row.sql");
  writeFileSync(script, "update bench_counter set n = n + 1 where id = 1;\n");
  const res = spawnSync(
    "pgbench",
    ["-n", "-h", u.hostname, "-p", u.port || "5432", "-U", u.username || "postgres", "-c", String(clients), "-j", "2", "-T", String(seconds), "-f", script, u.pathname.slice(1)],
    { encoding: "utf8" },
  );
  const m = /tps = ([\d.]+)/.exec(res.stdout ?? "");
  if (!m?.[1]) console.error(`pgbench did not run: ${res.error?.message ?? res.stderr}`);
  return m?.[1] ? Number(m[1]) : undefined;
}

async function main(): Promise<void> {
  // --metrics: count into the Prometheus registry as the app does, to compare the hot path with and without.
  if (process.argv.includes("--metrics")) metrics("app");
  const seconds = arg("seconds", 8);
  const callers = arg("callers", 64);
  const inFlight = arg("in-flight", 2);
  const maxBatch = arg("max-batch", 128);
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("set BENCH_DATABASE_URL, TEST_DATABASE_URL or DATABASE_URL to a Postgres server");
  const name = `ceilings_bench_enf_${Date.now().toString(36)}`;
  const admin = openPostgres(base, { max: 1 });
  await admin.db.execute(sql`create database ${sql.identifier(name)}`);
  const url = databaseUrl(base, name);
  const database = openPostgres(url, { max: 16 });
  const runs: Run[] = [];
  try {
    await migrateDatabase(database);
    const db = database.db;
    await db.execute(sql`create table bench_counter (id int primary key, n bigint not null)`);
    await db.execute(sql`insert into bench_counter values (1, 0)`);
    await makeEndpoint(db, "bench.one", "one");
    await makeEndpoint(db, "bench.three", "three");

    const tps = pgbench(url, seconds, 16);
    runs.push(await drive(`raw hot-row UPDATE (postgres.js, ${callers} callers, pool 16)`, seconds, callers, () =>
      db.execute(sql`update bench_counter set n = n + 1 where id = 1`),
    ));
    batcherFor(db, { maxBatch, maxInFlight: inFlight });
    runs.push(await drive(`reserve batched (${inFlight} in flight, up to ${maxBatch}), 1 ceiling`, seconds, callers, () => reserve(db, { endpoint: "bench.one", amount: 1 })));
    runs.push(await drive(`reserve batched (${inFlight} in flight, up to ${maxBatch}), 3 ceilings`, seconds, callers, () =>
      reserve(db, { endpoint: "bench.three", amount: 1, caller: `acct_${Math.floor(Math.random() * 50)}` }),
    ));
    const unbatched = openPostgres(url, { max: 16 });
    batcherFor(unbatched.db, { maxBatch: 1, maxInFlight: 16 });
    runs.push(await drive(`reserve unbatched, 3 ceilings`, seconds, callers, () =>
      reserve(unbatched.db, { endpoint: "bench.three", amount: 1, caller: `acct_${Math.floor(Math.random() * 50)}` }),
    ));
    await unbatched.close();

    const baseline = runs[0]?.ops ?? 1;
    console.log(`\nEnforcement hot path, ${callers} concurrent callers, ${seconds} s each, one database server, metrics ${process.argv.includes("--metrics") ? "on" : "off"}`);
    if (tps) console.log(`pgbench hot-row UPDATE, 16 clients: ${tps.toFixed(0)} tps`);
    console.log("run".padEnd(62), "ops/s".padStart(9), "p50 ms".padStart(8), "p99 ms".padStart(8), "x raw".padStart(7));
    for (const r of runs) {
      console.log(r.label.padEnd(62), r.ops.toFixed(0).padStart(9), r.p50.toFixed(1).padStart(8), r.p99.toFixed(1).padStart(8), (r.ops / baseline).toFixed(2).padStart(7));
    }
  } finally {
    await database.close();
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
