// The database CPU one reserve_batch call costs, read from the backend's own /proc entry (user +
// system time), not from a clock: on a shared machine wall time moves with the neighbours, CPU time
// far less, so two versions of the function compare within a percent or two in one run.
// One connection, compact answers (the library's call), no contention, fresh callers never: the
// batch cycles over 50 accounts, as bench:enforcement's do.
//   npx tsx scripts/bench/cpu-batch.ts -- [--calls 2000] [--rounds 3] [--batch 32] [--ceilings 3]
// With --against FILE, the same calls go to FILE's reserve_batch too (a copy of
// db/functions/reserve_batch.sql, say from `git show HEAD~1:db/functions/reserve_batch.sql`),
// interleaved round by round, so both versions see the same hour. Uses BENCH_DATABASE_URL, else
// TEST_DATABASE_URL, else DATABASE_URL (a server on this machine: /proc is read). Printed only.
import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { migrateDatabase, openPostgres } from "@/db/client";
import { databaseUrl } from "@/db/testing";
import { arg, makeBenchEndpoint, processCpuMicros, whole } from "./measure";

async function main(): Promise<void> {
  const calls = whole("calls", 2000);
  const size = whole("batch", 32);
  const rounds = whole("rounds", 3);
  const count = whole("ceilings", 3) === 1 ? 1 : 3;
  const against = arg("against", "");
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("set BENCH_DATABASE_URL, TEST_DATABASE_URL or DATABASE_URL to a Postgres server");
  const name = `ceilings_cpu_${Date.now().toString(36)}`;
  const admin = openPostgres(base, { max: 1 });
  await admin.db.execute(sql`create database ${sql.identifier(name)}`);
  const db = openPostgres(databaseUrl(base, name), { max: 1 });
  try {
    await migrateDatabase(db);
    await makeBenchEndpoint(db.db, "bench.cpu", count);
    const versions = [{ label: "db/functions/reserve_batch.sql", fn: "ceilings.reserve_batch" }];
    if (against) {
      // The other version under another name, so both live in one database.
      const source = readFileSync(path.resolve(against), "utf8").replace("FUNCTION ceilings.reserve_batch(", "FUNCTION ceilings.reserve_batch_against(");
      await db.db.execute(sql.raw(source));
      versions.push({ label: against, fn: "ceilings.reserve_batch_against" });
    }
    const [{ pid } = { pid: 0 }] = (await db.db.execute(sql`select pg_backend_pid() as pid`)) as unknown as { pid: number }[];
    let next = 0;
    const batch = () => JSON.stringify(Array.from({ length: size }, () => ({ endpoint: "bench.cpu", amount: 1, caller: `acct_${next++ % 50}` })));
    const best = versions.map(() => Infinity);
    for (let round = 0; round < rounds; round++) {
      for (const [v, version] of versions.entries()) {
        for (let i = 0; i < 50; i++) await db.db.execute(sql`select ${sql.raw(version.fn)}(${batch()}::jsonb, true)`);
        const cpu0 = processCpuMicros(pid);
        const t0 = performance.now();
        for (let i = 0; i < calls; i++) await db.db.execute(sql`select ${sql.raw(version.fn)}(${batch()}::jsonb, true)`);
        const us = (processCpuMicros(pid) - cpu0) / calls;
        const wall = ((performance.now() - t0) * 1000) / calls;
        best[v] = Math.min(best[v] ?? Infinity, us);
        console.log(
          JSON.stringify({
            bench: "cpu-batch",
            version: version.label,
            round,
            batch: size,
            ceilings: count,
            cpuUsPerCall: Math.round(us),
            wallUsPerCall: Math.round(wall),
          }),
        );
      }
    }
    console.log(`\nreserve_batch, ${size} requests a call on ${count} ceiling(s), database CPU, best of ${rounds} rounds of ${calls} calls`);
    for (const [v, version] of versions.entries())
      console.log(
        `${version.label.padEnd(40)}${(best[v] ?? 0).toFixed(0).padStart(8)} µs a call${((best[v] ?? 0) / size).toFixed(1).padStart(8)} µs a request`,
      );
  } finally {
    await db.close();
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
