// Measures the reservation hot path against the database's own limit on one hot row.
// Prints ratios measured in one run on this machine; nothing here is asserted by a test.
//   npm run bench:enforcement -- [--seconds 3] [--callers 1,8,32,64] [--in-flight 2] [--max-batch 128]
//                                 [--only batched|unbatched|sweep|settle] [--expiring 20000]
//                                 [--shapes bench.one,bench.three,bench.global-budgeted,bench.budgeted,bench.planned]
// Uses BENCH_DATABASE_URL, else TEST_DATABASE_URL, else DATABASE_URL (a server; a scratch database
// is created on it and dropped afterwards).
//
// A is pgbench running a hot-row guarded UPDATE (the raw cost of one admission on one row) with 64
// clients, in the same run. Every row of the matrix (callers x ceilings x batched/unbatched)
// prints throughput, p50, p99, its ratio to A, the mean batch size and CPU per request, split into
// this Node process and the rest of the machine (the database, mostly), then one JSON line each.
// Each row (and the sweeper's and settle's) is measured after 2 s of the same calls unmeasured, as
// the prototype's bench warms up.
// Batched, the three-ceiling shape runs twice more, priced: in a budget of everyone's
// (bench.global-budgeted), and in that one and one per account (bench.budgeted), the per-account
// one with 100,000 accounts already counted today: what money counters in the same step cost.
// Then once more on plans (bench.planned): the same shape, its callers among 100,000 accounts on a
// plan with values on its per-caller ceiling and per-account budget, out of 1,000,000 accounts: the
// row to set beside bench.budgeted, whose callers are on the default plan.
// Last (alone with --only sweep), the sweeper beside live calls: 64 callers reserve on the
// three-ceiling endpoint through a pool with the enforcement pool's lock and statement timeouts,
// once with nothing expiring and once while a sweeper (as the worker runs it) expires 20,000
// reservations of the same endpoint (--expiring N): per second, p99 and the answers unavailable.
// And settle (alone with --only settle): 64 callers on the three-ceiling endpoint each reserve and
// then settle what they reserved, through the library's batchers: settles per second and their p99.
import { sql } from "drizzle-orm";
import { type Db, migrateDatabase, openPostgres } from "@/db/client";
import { databaseUrl } from "@/db/testing";
import { env } from "@/lib/env";
import { batcherFor, expireReservations, reserve, settleReservation } from "@/lib/enforcement";
import { metrics } from "@/lib/metrics";
import { arg, drive, makeBenchEndpoint, percentile, pgbench, whole } from "./bench/measure";

type Row = {
  callers: number;
  ceilings: 1 | 3;
  budgets: 0 | 1 | 2;
  plans: boolean;
  mode: "batched" | "unbatched";
  perSecond: number;
  p50: number;
  p99: number;
  ratioToA: number | null;
  meanBatch: number;
  nodeCpuUs: number;
  restCpuUs: number;
};

/**
 * Every row starts from the same ledger, as the prototype's runs do (side-by-side.sh truncates its
 * reservations and refusals, vacuums and checkpoints before each): without it each row inserted
 * into the indexes of every row before it, and the last shapes were measured on a million rows.
 * Counters stay (the per-account budget's 100,000 of today are part of its shape); their holds go.
 */
async function freshLedger(db: Db): Promise<void> {
  await db.execute(sql`truncate reservations, refusals, refusal_hourly`);
  await db.execute(sql`update counters set held = 0 where held <> 0`);
  await db.execute(sql`vacuum analyze reservations, refusals, counters`);
  await db.execute(sql`checkpoint`);
}

const WARM_UP_SECONDS = 2;

async function main(): Promise<void> {
  // --metrics: count into the Prometheus registry as the app does, to compare the hot path with and without.
  if (process.argv.includes("--metrics")) metrics("app");
  const seconds = whole("seconds", 3);
  const callerCounts = arg("callers", "1,8,32,64").split(",").map(Number);
  const inFlight = whole("in-flight", 2);
  const maxBatch = whole("max-batch", 128);
  const base = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!base) throw new Error("set BENCH_DATABASE_URL, TEST_DATABASE_URL or DATABASE_URL to a Postgres server");
  const name = `ceilings_bench_enf_${Date.now().toString(36)}`;
  const admin = openPostgres(base, { max: 1 });
  await admin.db.execute(sql`create database ${sql.identifier(name)}`);
  const url = databaseUrl(base, name);
  const setup = openPostgres(url, { max: 2 });
  const rows: Row[] = [];
  let tpsA: number | undefined;
  try {
    await migrateDatabase(setup);
    await setup.db.execute(sql`create table bench_counter (id int primary key, n bigint not null)`);
    await setup.db.execute(sql`insert into bench_counter values (1, 0)`);
    await makeBenchEndpoint(setup.db, "bench.one", 1);
    await makeBenchEndpoint(setup.db, "bench.three", 3);
    await makeBenchEndpoint(setup.db, "bench.budgeted", 3);
    await makeBenchEndpoint(setup.db, "bench.global-budgeted", 3);
    await makeBenchEndpoint(setup.db, "bench.planned", 3);
    await setup.db.execute(
      sql`update endpoints set parts = '[{"name":"units","pricePico":2500000}]' where key like 'bench.%budgeted' or key = 'bench.planned'`,
    );
    for (const scope of ["global", "account"]) {
      await setup.db.execute(sql`
        insert into budgets (key, name, scope, "window", value, max_value, default_value)
        values (${`bench.${scope}`}, ${`bench ${scope}`}, ${scope}, 'utc_day', 1000000000000, 1000000000000, 1000000000000)`);
      await setup.db.execute(sql`
        insert into budget_members (budget_id, endpoint_id)
        select b.id, e.id from budgets b, endpoints e
        where b.key = ${`bench.${scope}`} and (e.key in ('bench.budgeted', 'bench.planned') or (e.key = 'bench.global-budgeted' and b.scope = 'global'))`);
    }
    // 900,000 accounts on the default plan (acct_*) and 100,000 on bench.pro (pacct_*), whose values
    // are far out of reach like the ceilings'.
    await setup.db.execute(sql`insert into plans (key, name) values ('bench.pro', 'bench pro')`);
    await setup.db.execute(sql`
      insert into plan_limit_values (plan_id, limit_id, value)
      select p.id, c.limit_id, 999999999999 from plans p, ceilings c join endpoints e on e.id = c.endpoint_id
      where p.key = 'bench.pro' and e.key = 'bench.planned' and c.scope = 'caller'`);
    await setup.db.execute(sql`
      insert into plan_limit_values (plan_id, limit_id, value)
      select p.id, b.limit_id, 999999999999 from plans p, budgets b where p.key = 'bench.pro' and b.key = 'bench.account'`);
    await setup.db.execute(sql`insert into accounts (account) select 'acct_' || g from generate_series(0, 899999) g`);
    await setup.db.execute(sql`
      insert into accounts (account, plan_id) select 'pacct_' || g, p.id from plans p, generate_series(0, 99999) g where p.key = 'bench.pro'`);
    await setup.db.execute(sql`analyze accounts`);
    // 100,000 accounts already counted in today's window of the per-account budget: a batch's
    // cost must not grow with them (each counter is one keyed probe).
    await setup.db.execute(sql`
      insert into counters (limit_id, scope_key, window_start, window_end, held, settled, reservations)
      select b.limit_id, 'acct_' || g, date_trunc('day', now() at time zone 'UTC') at time zone 'UTC',
             date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' + interval '1 day', 0, g % 1000, 1
      from budgets b, generate_series(1000, 100999) g where b.key = 'bench.account'`);

    // The setup wrote a million accounts and 100,000 counters: vacuum and analyze them now, not
    // autovacuum in the middle of the first rows measured.
    await setup.db.execute(sql`vacuum analyze`);
    tpsA = pgbench(url, seconds, 64);
    const only = arg("only", "all");
    const modes = (["batched", "unbatched"] as const).filter((m) => only === "all" || only === m);
    for (const mode of modes) {
      // Unbatched: one request per database call, 16 connections.
      const pool = openPostgres(url, { max: mode === "batched" ? inFlight : 16 });
      const batcher = batcherFor(pool.db, mode === "batched" ? { maxBatch, maxInFlight: inFlight } : { maxBatch: 1, maxInFlight: 16 });
      try {
        const shapes: { count: 1 | 3; budgets: 0 | 1 | 2; plans: boolean; endpoint: string }[] = [
          { count: 1, budgets: 0, plans: false, endpoint: "bench.one" },
          { count: 3, budgets: 0, plans: false, endpoint: "bench.three" },
          ...(mode === "batched"
            ? [
                { count: 3 as const, budgets: 1 as const, plans: false, endpoint: "bench.global-budgeted" },
                { count: 3 as const, budgets: 2 as const, plans: false, endpoint: "bench.budgeted" },
                { count: 3 as const, budgets: 2 as const, plans: true, endpoint: "bench.planned" },
              ]
            : []),
        ];
        const picked = arg("shapes", "");
        for (const { count, budgets, plans, endpoint } of shapes.filter((s) => picked === "" || picked.split(",").includes(s.endpoint))) {
          const prefix = plans ? "pacct_" : "acct_";
          for (const callers of callerCounts) {
            await freshLedger(setup.db);
            const op = async () => {
              await reserve(pool.db, { endpoint, amount: 1, caller: `${prefix}${Math.floor(Math.random() * 50)}` });
              return true;
            };
            // Unmeasured first, as the prototype's bench does (2 s): without it the first row paid
            // for compiling the library and planning the function, and measured about a fifth
            // slower than the same row run again.
            await drive(WARM_UP_SECONDS, callers, op);
            const calls0 = batcher.stats.calls;
            const requests0 = batcher.stats.requests;
            const d = await drive(seconds, callers, op);
            // This process, and the rest of the machine (the database, mostly).
            const m = {
              perSecond: d.perSecond,
              p50: d.p50,
              p99: d.p99,
              nodeCpuUs: d.generatorCpuUs,
              restCpuUs: Math.max(0, d.machineCpuUs - d.generatorCpuUs),
            };
            const calls = batcher.stats.calls - calls0;
            rows.push({
              callers,
              ceilings: count,
              budgets,
              plans,
              mode,
              ...m,
              ratioToA: tpsA ? m.perSecond / tpsA : null,
              meanBatch: calls > 0 ? (batcher.stats.requests - requests0) / calls : 0,
            });
          }
        }
      } finally {
        await batcher.close();
        await pool.close();
      }
    }

    const sweep = only === "sweep" || only === "all" ? await sweepRows(url, seconds, inFlight, maxBatch, whole("expiring", 20_000)) : null;
    const settle = only === "settle" || only === "all" ? await settleRow(url, seconds, inFlight, maxBatch) : null;

    if (rows.length > 0) {
      console.log(
        `\nEnforcement hot path, ${seconds} s a row, one database server, metrics ${process.argv.includes("--metrics") ? "on" : "off"}, in-flight ${inFlight}, max batch ${maxBatch}`,
      );
      console.log(`A: pgbench hot-row guarded UPDATE, 64 clients: ${tpsA ? tpsA.toFixed(0) : "n/a"} tps`);
      console.log(
        ["mode", "ceilings", "budgets", "plans", "callers", "per s", "p50 ms", "p99 ms", "x A", "batch", "node µs", "rest µs"]
          .map((h, i) => (i === 0 ? h.padEnd(10) : h.padStart(9)))
          .join(""),
      );
      for (const r of rows) {
        console.log(
          [
            r.mode.padEnd(10),
            String(r.ceilings).padStart(9),
            String(r.budgets).padStart(9),
            (r.plans ? "yes" : "no").padStart(9),
            String(r.callers).padStart(9),
            r.perSecond.toFixed(0).padStart(9),
            r.p50.toFixed(1).padStart(9),
            r.p99.toFixed(1).padStart(9),
            (r.ratioToA === null ? "n/a" : r.ratioToA.toFixed(2)).padStart(9),
            r.meanBatch.toFixed(1).padStart(9),
            r.nodeCpuUs.toFixed(0).padStart(9),
            r.restCpuUs.toFixed(0).padStart(9),
          ].join(""),
        );
      }
      console.log();
      for (const r of rows) {
        const round = (v: number) => Math.round(v * 100) / 100;
        console.log(
          JSON.stringify({
            bench: "enforcement",
            at: new Date().toISOString(),
            aTps: tpsA ?? null,
            mode: r.mode,
            ceilings: r.ceilings,
            budgets: r.budgets,
            plans: r.plans,
            callers: r.callers,
            perSecond: round(r.perSecond),
            p50Ms: round(r.p50),
            p99Ms: round(r.p99),
            ratioToA: r.ratioToA === null ? null : round(r.ratioToA),
            meanBatch: round(r.meanBatch),
            nodeCpuUsPerRequest: round(r.nodeCpuUs),
            restCpuUsPerRequest: round(r.restCpuUs),
          }),
        );
      }
    }
    if (sweep) {
      console.log(`\nThe sweeper beside live calls (3 ceilings, 64 callers, ${seconds} s, lock timeout ${env().ENFORCEMENT_LOCK_TIMEOUT_MS} ms):`);
      for (const r of [sweep.quiet, sweep.sweeping]) {
        console.log(
          `  ${r.label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(7)} per s  p99 ${r.p99.toFixed(1).padStart(6)} ms  unavailable ${r.unavailable}${r.expired === null ? "" : `  expired ${r.expired} (slowest sweep ${r.slowestSweepMs.toFixed(0)} ms)`}`,
        );
      }
      console.log(`  p99 while sweeping: ${(sweep.sweeping.p99 / Math.max(sweep.quiet.p99, 0.001)).toFixed(2)} x quiet`);
      console.log(JSON.stringify({ bench: "enforcement-sweep", at: new Date().toISOString(), quiet: sweep.quiet, sweeping: sweep.sweeping }));
    }
    if (settle) {
      console.log(`\nReserve, then settle what was reserved (3 ceilings, 64 callers, ${seconds} s):`);
      console.log(
        `  settled ${settle.perSecond.toFixed(0).padStart(7)} per s  settle p50 ${settle.settleP50.toFixed(1)} ms  p99 ${settle.settleP99.toFixed(1)} ms  reserve + settle p99 ${settle.pairP99.toFixed(1)} ms  not settled ${settle.notSettled}`,
      );
      console.log(JSON.stringify({ bench: "enforcement-settle", at: new Date().toISOString(), ...settle }));
    }
  } finally {
    await setup.close();
    await admin.db.execute(sql`drop database if exists ${sql.identifier(name)} with (force)`);
    await admin.close();
  }
}

type SweepRow = { label: string; perSecond: number; p99: number; unavailable: number; expired: number | null; slowestSweepMs: number };

/**
 * 64 callers on bench.three, through a pool bounded as the enforcement pool is (db/client.ts), with
 * nothing expiring, then while a sweeper expires `expiring` reservations of the same endpoint.
 */
async function sweepRows(url: string, seconds: number, inFlight: number, maxBatch: number, expiring: number): Promise<{ quiet: SweepRow; sweeping: SweepRow }> {
  const e = env();
  const pool = openPostgres(url, {
    max: inFlight + 2,
    connection: { lock_timeout: e.ENFORCEMENT_LOCK_TIMEOUT_MS, statement_timeout: e.ENFORCEMENT_STATEMENT_TIMEOUT_MS },
  });
  const sweeper = openPostgres(url, { max: 1 });
  batcherFor(pool.db, { maxBatch, maxInFlight: inFlight, deadlineMs: e.ENFORCEMENT_DEADLINE_MS });
  try {
    let unavailable = 0;
    const call = async () => {
      const answer = await reserve(pool.db, { endpoint: "bench.three", amount: 1, ttlSeconds: 3_600, caller: `acct_${Math.floor(Math.random() * 50)}` });
      if (answer.status === "refused" && answer.gate === "unavailable") unavailable += 1;
      return true;
    };
    const run = async (label: string, sweep: boolean): Promise<SweepRow> => {
      unavailable = 0;
      let expired = 0;
      let slowest = 0;
      let driving = true;
      const sweeping = (async () => {
        while (sweep && driving) {
          const t0 = performance.now();
          const n = await expireReservations(sweeper.db, 500);
          slowest = Math.max(slowest, performance.now() - t0);
          expired += n;
          // The worker's loop: at once while there is a backlog, a pause when there is none.
          if (n === 0) await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();
      const d = await drive(seconds, 64, call);
      driving = false;
      await sweeping;
      return { label, perSecond: d.perSecond, p99: d.p99, unavailable, expired: sweep ? expired : null, slowestSweepMs: slowest };
    };
    // This pool's connections plan their statements here, not in the quiet row set beside the sweeping one.
    await drive(WARM_UP_SECONDS, 64, call);
    const quiet = await run("nothing expiring", false);
    // The backlog: granted for real (their charges name the counters), then past their TTL.
    for (let done = 0; done < expiring; done += 1_000) {
      await Promise.all(
        Array.from({ length: Math.min(1_000, expiring - done) }, (_, i) =>
          reserve(pool.db, { endpoint: "bench.three", amount: 1, ttlSeconds: 3_600, caller: `sweep_${i % 50}` }),
        ),
      );
    }
    // Only the backlog (its own callers): the calls of the quiet run stay held.
    await sweeper.db.execute(
      sql`update reservations r set expires_at = now() - interval '1 second' from endpoints e where e.id = r.endpoint_id and e.key = 'bench.three' and r.state = 'held' and r.caller like 'sweep\_%'`,
    );
    const sweeping = await run(`while ${expiring.toLocaleString("en-US")} expire`, true);
    return { quiet, sweeping };
  } finally {
    await batcherFor(pool.db).close();
    await pool.close();
    await sweeper.close();
  }
}

type SettleRow = { perSecond: number; settleP50: number; settleP99: number; pairP99: number; notSettled: number };

/** 64 callers on bench.three, each reserving and then settling it at 1 unit, as a service does. */
async function settleRow(url: string, seconds: number, inFlight: number, maxBatch: number): Promise<SettleRow> {
  const pool = openPostgres(url, { max: inFlight * 2 + 2 });
  batcherFor(pool.db, { maxBatch, maxInFlight: inFlight });
  try {
    let settleMs: number[] = [];
    let notSettled = 0;
    const pair = async () => {
      const answer = await reserve(pool.db, { endpoint: "bench.three", amount: 2, caller: `acct_${Math.floor(Math.random() * 50)}` });
      if (answer.status !== "granted") {
        notSettled += 1;
        return false;
      }
      const t0 = performance.now();
      const result = await settleReservation(pool.db, { reservationId: answer.reservationId, actual: 1 });
      settleMs.push(performance.now() - t0);
      if (result.status !== "settled") notSettled += 1;
      return result.status === "settled";
    };
    await drive(WARM_UP_SECONDS, 64, pair);
    settleMs = [];
    notSettled = 0;
    const d = await drive(seconds, 64, pair);
    settleMs.sort((a, b) => a - b);
    return { perSecond: settleMs.length / seconds, settleP50: percentile(settleMs, 50), settleP99: percentile(settleMs, 99), pairP99: d.p99, notSettled };
  } finally {
    await batcherFor(pool.db).close();
    await pool.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
