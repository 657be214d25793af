import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Db } from "@/db/client";
import { ceilings, endpoints } from "@/db/schema";
import type { CeilingMetric, CeilingScope } from "@/lib/vocabulary";

// What the benches share: percentiles, CPU time from /proc, pgbench's hot-row baseline (A) and
// the bench endpoints. Numbers are printed, never asserted.

export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

export function whole(name: string, fallback: number): number {
  const v = Number(arg(name, String(fallback)));
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive whole number`);
  return v;
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

// USER_HZ is 100 on Linux: a tick is 10,000 µs.
const TICK_US = 10_000;

/** Busy CPU time of the whole machine so far, in microseconds (user + nice + system + irq + softirq). */
export function machineCpuMicros(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  return ((f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0)) * TICK_US;
}

/** user + system CPU of one process so far, in microseconds, or 0 if it is gone. */
export function processCpuMicros(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces: fields count from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return 0;
  }
}

/** CPU of every process named `postgres` (the server and its backends, on this machine), in microseconds. */
export function postgresCpuMicros(): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") total += processCpuMicros(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** pgbench A: a guarded UPDATE of one hot row (admit while under the limit) from `clients` clients. */
export function pgbench(url: string, seconds: number, clients: number): number | undefined {
  const u = new URL(url);
  const script = path.join(mkdtempSync(path.join(tmpdir(), "ceilings-bench-")), "hot-row.sql");
  writeFileSync(script, "update bench_counter set n = n + 1 where id = 1 and n < 9000000000000000;\n");
  const res = spawnSync(
    "pgbench",
    [
      "-n",
      "-h",
      u.hostname,
      "-p",
      u.port || "5432",
      "-U",
      u.username || "postgres",
      "-c",
      String(clients),
      "-j",
      "2",
      "-T",
      String(seconds),
      "-f",
      script,
      u.pathname.slice(1),
    ],
    { encoding: "utf8" },
  );
  const m = /tps = ([\d.]+)/.exec(res.stdout ?? "");
  if (!m?.[1]) console.error(`pgbench did not run: ${res.error?.message ?? res.stderr}`);
  return m?.[1] ? Number(m[1]) : undefined;
}

/** A bench endpoint with one ceiling (global units) or three (plus global calls and units per caller), all far out of reach unless `value` says. */
export async function makeBenchEndpoint(db: Db, key: string, count: 1 | 3, value = 1_000_000_000_000): Promise<void> {
  const [e] = await db.insert(endpoints).values({ key, name: key, unit: "units", perCallMax: 1000 }).returning();
  if (!e) throw new Error("no endpoint");
  const specs: { metric: CeilingMetric; scope: Exclude<CeilingScope, "destination"> }[] = [{ metric: "units", scope: "global" }];
  if (count === 3) specs.push({ metric: "calls", scope: "global" }, { metric: "units", scope: "caller" });
  await db
    .insert(ceilings)
    .values(specs.map((s) => ({ ...s, endpointId: e.id, window: "utc_day" as const, value, maxValue: Math.max(value, 1), defaultValue: value })));
}

/**
 * Runs `op` (true: the answer expected) from `callers` loops for `seconds`: rate, p50 and p99 in ms,
 * and CPU per request in µs: this process (the load generator), the API process `apiPid` if given,
 * Postgres, the rest of the machine, and the whole machine.
 */
export async function drive(seconds: number, callers: number, op: () => Promise<boolean>, apiPid: number | null = null) {
  const latencies: number[] = [];
  let unexpected = 0;
  const gen0 = process.cpuUsage();
  const api0 = apiPid === null ? 0 : processCpuMicros(apiPid);
  const db0 = postgresCpuMicros();
  const machine0 = machineCpuMicros();
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        if (!(await op())) unexpected++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const genCpu = process.cpuUsage(gen0);
  const generator = genCpu.user + genCpu.system;
  const api = apiPid === null ? 0 : processCpuMicros(apiPid) - api0;
  // A backend that exits meanwhile takes its CPU out of the sum: never below zero.
  const db = Math.max(0, postgresCpuMicros() - db0);
  const machine = machineCpuMicros() - machine0;
  latencies.sort((a, b) => a - b);
  const n = Math.max(1, latencies.length);
  return {
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    unexpected,
    apiCpuUs: apiPid === null ? null : api / n,
    dbCpuUs: db / n,
    generatorCpuUs: generator / n,
    otherCpuUs: Math.max(0, machine - api - db - generator) / n,
    machineCpuUs: machine / n,
  };
}
