// Where the time of one reserve_batch_arrays call (the library's) goes, phase by phase (the comments
// "-- Phase N" or "-- Phase Na" of db/functions/reserve_batch_arrays.sql, the common batch's path): a copy of the function that returns right before phase N is
// timed for every N, on a scratch database, so each phase's cost is the difference between two
// rows. One connection, no contention: this is the function's own CPU, not lock waits.
//   npx tsx scripts/bench/profile-batch.ts -- [--calls 60] [--rounds 7] [--batch 32] [--ceilings 3]
// Uses BENCH_DATABASE_URL, else TEST_DATABASE_URL, else DATABASE_URL (a server). Printed only.
import { readFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import { migrateDatabase, openPostgres } from "@/db/client";
import { databaseUrl } from "@/db/testing";
import { typedArrays } from "@/lib/enforcement/batcher";
import { makeBenchEndpoint, whole } from "./measure";

async function main(): Promise<void> {
  const calls = whole("calls", 60);
  const size = whole("batch", 32);
  const count = whole("ceilings", 3) === 1 ? 1 : 3;
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("set BENCH_DATABASE_URL, TEST_DATABASE_URL or DATABASE_URL to a Postgres server");
  const name = `ceilings_profile_${Date.now().toString(36)}`;
  const admin = openPostgres(base, { max: 1 });
  await admin.db.execute(sql`create database ${sql.identifier(name)}`);
  const db = openPostgres(databaseUrl(base, name), { max: 1 });
  try {
    await migrateDatabase(db);
    await makeBenchEndpoint(db.db, "bench.profile", count);
    const source = readFileSync(path.join(process.cwd(), "db", "functions", "reserve_batch_arrays.sql"), "utf8");
    const phases = [...source.matchAll(/^ {2}-- Phase (\d+[a-z]?)\b/gm)].map((m) => m[1] ?? "");
    // Before each phase: return now if asked to stop there.
    const profiled = source
      .replace("FUNCTION ceilings.reserve_batch_arrays(", "FUNCTION ceilings.reserve_batch_profile(")
      .replace(/^ {2}-- Phase (\d+[a-z]?)\b/gm, (line, n: string) => `  IF current_setting('profile.stop', true) = '${n}' THEN RETURN NULL; END IF;\n${line}`);
    await db.db.execute(sql.raw(profiled));
    const requests = Array.from({ length: size }, (_, i) => ({ endpoint: "bench.profile", amount: 1, caller: `acct_${i % 50}`, requestId: `req_${i}` }));
    const arrays = typedArrays(requests);
    if (!arrays) throw new Error("the bench's requests are not typed");
    const call = sql`select ceilings.reserve_batch_profile(${arrays[0]}::text[], ${arrays[1]}::bigint[], ${arrays[2]}::text[],
      request_ids => ${arrays[7]}::text[], compact => true)`;
    // Rounds over every stop, each stop's best round kept: on a shared machine the minimum is the
    // function's own cost, and interleaving keeps a burst of other work from skewing one phase.
    const stops = [...phases, "end"];
    const best = new Map<string, number>(stops.map((s) => [s, Infinity]));
    const rounds = whole("rounds", 7);
    for (let round = 0; round < rounds; round++) {
      for (const stop of stops) {
        await db.db.execute(sql`select set_config('profile.stop', ${stop}, false)`);
        for (let i = 0; i < 5; i++) await db.db.execute(call);
        const t0 = performance.now();
        for (let i = 0; i < calls; i++) await db.db.execute(call);
        best.set(stop, Math.min(best.get(stop) ?? Infinity, ((performance.now() - t0) * 1000) / calls));
      }
    }
    const rows = stops.map((stop) => ({ stop, us: best.get(stop) ?? 0 }));
    console.log(`\nreserve_batch_arrays, ${size} requests a call on ${count} ceiling(s), best of ${rounds} rounds of ${calls} calls, one connection`);
    console.log("part of the call                     µs a call   µs a request");
    const line = (label: string, us: number) => console.log(`${label.padEnd(36)}${us.toFixed(0).padStart(11)}${(us / size).toFixed(1).padStart(15)}`);
    line("the call itself, before phase 1", rows[0]?.us ?? 0);
    for (let i = 1; i < rows.length; i++) line(`phase ${rows[i - 1]?.stop}`, (rows[i]?.us ?? 0) - (rows[i - 1]?.us ?? 0));
    line("whole call", rows.at(-1)?.us ?? 0);
    for (const r of rows)
      console.log(JSON.stringify({ bench: "profile-batch", batch: size, ceilings: count, returnsBefore: r.stop, usPerCall: Math.round(r.us) }));
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
