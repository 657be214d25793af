import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { closeSync, createWriteStream, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type Database, type Db, migrateDatabase, openPostgres, resultRows } from "@/db/client";
import { reconcileCounters } from "@/lib/alerts";
import { createApiKey } from "@/lib/api-keys";
import { CeilingError, type CeilingErrorCode, killEndpoint, restoreEndpoint } from "@/lib/ceilings";
import { reserve } from "@/lib/enforcement";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { connectionBound } from "@/lib/connection-bound";
import { SilentHost } from "@/db/silent-host";
import {
  type ClusterConfig,
  type ClusterState,
  childPids,
  configFromEnv,
  connectionUrl,
  crashNode,
  down,
  healthy,
  isAlive,
  isLeader,
  isSyncStandby,
  type Member,
  postmasterPid,
  readState,
  startNode,
  up,
  waitForMembers,
} from "./cluster";
import { connectionsOf } from "./connections";

// npm run test:ha: the chaos test of the highly available setup. Three client processes of 64
// callers each reserve with batching on, settle and release (client-a through the library;
// client-b over HTTP through the client package to the API server on the cluster, npm run api;
// client-c through the library on a URL whose first host accepts TCP and never answers, a
// machine that died silently), while the primary is killed (kill -9 of its Patroni and
// postmaster) three times and the synchronous standby once. Every primary kill must be answered
// by a grant to every client within 15 s, and no process may hold more connections than
// lib/connection-bound.ts allows; the windows and connection counts are printed. Every grant a client was told about
// is on disk as it happens (chaos-worker.ts); afterwards the checker asserts that none is missing
// from the ledger, that no ceiling is overspent, that counters agree with the ledger, and that a
// kill switch pulled right after a failover bound the next call. Bounded: a fixed list of kills,
// and the whole run is aborted (and the cluster stopped) after HA_TEST_TIMEOUT_S seconds.
//
// `npm run test:ha -- --sync-off` runs the checker against asynchronous replication with lagging
// standbys and a failover right after a burst: there it should find lost grants, which shows it
// can. That run reports and exits 0 whatever it finds; it is not part of CI.

const syncOff = process.argv.includes("--sync-off");
const config: ClusterConfig = {
  ...configFromEnv(process.env, "HA_TEST_", {
    // Under /tmp, not the checkout: the postgres user must reach it, and a CI checkout may sit in
    // a folder closed to other users (/root).
    dir: path.join(tmpdir(), `ceilings-ha-test-${createHash("sha1").update(process.cwd()).digest("hex").slice(0, 8)}`),
    pgPorts: [5451, 5452, 5453],
    restPorts: [8018, 8019, 8020],
    etcdPorts: [2389, 2390, 2391, 2392, 2393, 2394],
  }),
  ...(syncOff ? { synchronous: false, strict: false } : {}),
};
const url = connectionUrl(config);
const TIMEOUT_S = Number(process.env.HA_TEST_TIMEOUT_S ?? 600);
const LOOPS = Number(process.env.HA_TEST_LOOPS ?? 64);
/** How long the test waits for a failover to be over, and grants flowing on the new primary. */
const RESUME_WITHIN_MS = 45_000;
/** Every client must be granted again within this after a primary kill (p100). */
const GRANT_WITHIN_MS = 15_000;
const TIGHT_VALUE = 3000;

const log = (line: string) => console.log(`[test:ha ${new Date().toISOString().slice(11, 23)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Worker = { name: string; child: ChildProcessWithoutNullStreams; file: string; out: string; exited: Promise<number | null> };
const workers: Worker[] = [];
let admin: Database | undefined;
let cleaning: Promise<void> | undefined;
let ownsFolder = false;
let dashboard: ReturnType<typeof spawn> | undefined;
let apiServer: ReturnType<typeof spawn> | undefined;
const silent = new SilentHost();

/** Stops the clients and the whole cluster, whatever state the run is in. Safe to call twice. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
    if (dashboard && dashboard.exitCode === null) dashboard.kill("SIGKILL");
    if (apiServer && apiServer.exitCode === null) apiServer.kill("SIGKILL");
    await admin?.close().catch(() => undefined);
    await silent.close().catch(() => undefined);
    // Never stop a cluster another run owns.
    if (!ownsFolder) return;
    await down(config.dir, log).catch((error: unknown) => log(`down failed: ${String(error)}`));
    rmSync(`${config.dir}.owner`, { force: true });
  })();
  return cleaning;
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping the cluster`);
    void cleanup().finally(() => process.exit(130));
  });
}

function startWorker(name: string, endpoints: string[], options: { http?: { url: string; key: string }; databaseUrl?: string } = {}): Worker {
  const { http } = options;
  const file = path.join(config.dir, `record-${name}.log`);
  const child = spawn(process.execPath, ["--import", "tsx", path.join(__dirname, "chaos-worker.ts"), name, file, endpoints.join(","), String(LOOPS)], {
    cwd: path.resolve(__dirname, "..", ".."),
    env: { ...process.env, DATABASE_URL: options.databaseUrl ?? url, ...(http ? { CHAOS_API_URL: http.url, CHAOS_API_KEY: http.key } : {}) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const worker: Worker = { name, child, file, out: "", exited: new Promise((r) => child.on("exit", (code) => r(code))) };
  child.stdout.on("data", (chunk: Buffer) => (worker.out += chunk.toString()));
  // The clients log unavailable refusals (at most one line a second) to stderr: kept in a file,
  // out of the report.
  const errors = createWriteStream(path.join(config.dir, "logs", `${name}.stderr.log`));
  child.stderr.pipe(errors);
  workers.push(worker);
  return worker;
}

async function until<T>(what: string, timeoutMs: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms: ${what}${lastError ? ` (last error: ${String(lastError)})` : ""}`);
}

function state(): ClusterState {
  const s = readState(config.dir);
  if (!s) throw new Error("no cluster state");
  return s;
}

const nodeIndex = (m: Member) => config.pgPorts.indexOf(m.port);

let silentPort = 0;
/** The processes that hold database connections: the library clients and the API server (client-b's). */
function connectionHolders(): { name: string; pid: number }[] {
  const holders = workers.filter((w) => w.name !== "client-b").map((w) => ({ name: w.name, pid: w.child.pid ?? 0 }));
  return apiServer?.pid ? [...holders, { name: "api", pid: apiServer.pid }] : holders;
}

/** "client-a 12, client-c 14 (+1 to the silent host), api 25": connections per process now. */
function connectionCounts(): string {
  return connectionHolders()
    .map((h) => {
      const quiet = connectionsOf(h.pid, [silentPort]);
      return `${h.name} ${connectionsOf(h.pid, config.pgPorts)}${quiet > 0 ? ` (+${quiet} to the silent host)` : ""}`;
    })
    .join(", ");
}

/** Samples every process's connections (the nodes and the silent host) every 250 ms; the most seen each. */
function watchConnectionPeaks(): () => Map<string, number> {
  const peaks = new Map<string, number>();
  const timer = setInterval(() => {
    for (const h of connectionHolders()) {
      const n = connectionsOf(h.pid, [...config.pgPorts, silentPort]);
      peaks.set(h.name, Math.max(peaks.get(h.name) ?? 0, n));
    }
  }, 250);
  return () => {
    clearInterval(timer);
    return peaks;
  };
}

type Kill = {
  kind: "primary" | "standby";
  node: string;
  at: number;
  newLeader?: string;
  electedMs?: number;
  grantsAfterMs?: number;
  /** Connections per process before the kill, at the election, when grants came back, after the rejoin. */
  connections: string[];
};

/** kill -9 of one node, then waits for a leader and for reservations to be granted again. */
async function killAndRecover(db: Db, kind: Kill["kind"], endpoint: string, afterFailover?: (kill: Kill) => Promise<void>): Promise<Kill> {
  const ms = await waitForMembers(config, "a healthy cluster before the kill", (m) => healthy(config, m), 60_000);
  const target = kind === "primary" ? ms.find(isLeader) : (ms.find(isSyncStandby) ?? ms.find((m) => !isLeader(m)));
  if (!target) throw new Error(`no ${kind} to kill`);
  const i = nodeIndex(target);
  const before = connectionCounts();
  const pids = crashNode(state(), i);
  const kill: Kill = { kind, node: target.name, at: Date.now(), connections: [`before: ${before}`] };
  log(`kill -9 ${kind} ${target.name} (${target.host}:${target.port}), pids ${pids.join(" ")}; connections before: ${before}`);
  const note = (when: string) => {
    const counts = connectionCounts();
    kill.connections.push(`${when}: ${counts}`);
    log(`connections ${when}: ${counts}`);
  };
  if (kind === "primary") {
    const after = await waitForMembers(config, "a new leader", (m) => m.some((x) => isLeader(x) && x.name !== target.name), RESUME_WITHIN_MS);
    kill.newLeader = after.find(isLeader)?.name;
    kill.electedMs = Date.now() - kill.at;
    log(`${kill.newLeader} leads after ${kill.electedMs} ms`);
    note(`at the election (${(kill.electedMs / 1000).toFixed(1)} s)`);
    if (afterFailover) await afterFailover(kill);
  }
  await until("a grant after the kill", RESUME_WITHIN_MS, async () => {
    const d = await reserve(db, { endpoint, amount: 1, caller: "checker", ttlSeconds: 60 });
    return d.status === "granted" ? d : undefined;
  });
  kill.grantsAfterMs = Date.now() - kill.at;
  log(`grants again ${kill.grantsAfterMs} ms after the kill`);
  note(`granting again (${(kill.grantsAfterMs / 1000).toFixed(1)} s)`);
  // The killed node comes back as a standby (pg_rewind if it has to), as an operator's restart would.
  startNode(state(), i);
  await waitForMembers(config, `${target.name} back and the cluster healthy`, (m) => healthy(config, m), 90_000);
  log(`${target.name} rejoined`);
  note("after the rejoin");
  return kill;
}

/** A kill switch pulled right after a failover must bind the very next decision on the endpoint. */
async function killSwitchBinds(db: Db, endpoint: string): Promise<string> {
  const actor = { type: "system" as const, name: "test:ha" };
  await untilDone("the kill switch", "already_killed", () =>
    killEndpoint(db, { endpointKey: endpoint, actor, reason: "chaos test: kill switch right after a failover" }),
  );
  const next = await until("a decision after the kill switch", 30_000, async () => {
    const d = await reserve(db, { endpoint, amount: 1, caller: "checker" });
    return d.status === "refused" && d.gate === "unavailable" ? undefined : d;
  });
  const verdict = next.status === "refused" ? next.gate : next.status;
  await untilDone("restoring the endpoint", "not_killed", () => restoreEndpoint(db, { endpointKey: endpoint, actor, reason: "chaos test" }));
  return verdict;
}

/**
 * Retries a kill or restore through the failover until it answers. `done` is the refusal that
 * says it is already in force: an attempt whose answer was lost may have committed.
 */
async function untilDone(what: string, done: CeilingErrorCode, attempt: () => Promise<unknown>): Promise<void> {
  await until(what, 30_000, async () => {
    try {
      await attempt();
    } catch (error) {
      if (!(error instanceof CeilingError && error.code === done)) throw error;
    }
    return true;
  });
}

type Records = {
  grants: Map<string, { endpoint: string; amount: number; at: number; client: string }>;
  settled: Map<string, number>;
  released: Set<string>;
  /** Settles and releases answered unavailable with mayHaveApplied: false (never retried by the clients). */
  notApplied: Set<string>;
};

function readRecords(): Records {
  const r: Records = { grants: new Map(), settled: new Map(), released: new Set(), notApplied: new Set() };
  for (const f of readdirSync(config.dir).filter((f) => f.startsWith("record-"))) {
    const client = f.slice("record-".length, -".log".length);
    for (const line of readFileSync(path.join(config.dir, f), "utf8").split("\n")) {
      const [kind, a = "", b = "", c = "", d = ""] = line.split(" ");
      if (kind === "G") r.grants.set(a, { endpoint: b, amount: Number(c), at: Number(d), client });
      else if (kind === "S" && c === "settled") r.settled.set(a, Number(b));
      else if (kind === "R" && b === "released") r.released.add(a);
      else if ((kind === "S" && c === "unavailable" && d === "false") || (kind === "R" && b === "unavailable" && c === "false")) r.notApplied.add(a);
    }
  }
  return r;
}

/**
 * Seconds during which no caller was granted anything after one kill: the longest gap between
 * consecutive grants (of both clients) that starts in [from - 1 s, to - 1 s). Normally grants come milliseconds
 * apart, so the gap is the failover as the clients saw it. (Counting unavailable answers instead
 * would undercount: a caller waits up to the deadline for each one.)
 */
function unavailableSeconds(grantTimes: number[], from: number, to: number): number {
  let gap = 0;
  for (let i = 1; i < grantTimes.length; i++) {
    const a = grantTimes[i - 1] ?? 0;
    const b = grantTimes[i] ?? 0;
    // A gap belongs to the kill it starts after: the last grant before an outage is at most a
    // moment before the kill, and the next kill's outage starts just before that kill.
    if (b > from && a >= from - 1000 && a < to - 1000) gap = Math.max(gap, b - a);
  }
  return gap / 1000;
}

/** The same gap, for each client's own grants: the failover as that process saw it. */
function windowsByClient(records: Records, from: number, to: number): { client: string; seconds: number }[] {
  return workers.map((w) => {
    const times = [...records.grants.values()]
      .filter((g) => g.client === w.name)
      .map((g) => g.at)
      .sort((a, b) => a - b);
    return { client: w.name, seconds: unavailableSeconds(times, from, to) };
  });
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

type LedgerRow = { id: string; state: string; amount: string | number; settled_amount: string | number | null };

async function ledger(db: Db, ids: string[]): Promise<Map<string, LedgerRow>> {
  const found = new Map<string, LedgerRow>();
  for (let i = 0; i < ids.length; i += 5000) {
    const chunk = JSON.stringify(ids.slice(i, i + 5000));
    const rows = resultRows<LedgerRow>(
      await db.execute(sql`select id::text as id, state::text as state, amount, settled_amount from reservations
        where id in (select x::uuid from jsonb_array_elements_text(${chunk}::jsonb) as x)`),
    );
    for (const row of rows) found.set(row.id, row);
  }
  return found;
}

/** Counters above their ceiling's value, for any scope key and window. */
async function overspentCounters(db: Db, endpointIds: number[]): Promise<unknown[]> {
  return resultRows(
    await db.execute(sql`select c.id as ceiling_id, c.value, u.scope_key, u.window_start, u.held, u.settled
      from usage u join ceilings c on c.id = u.ceiling_id
      where c.endpoint_id in (select x::int from jsonb_array_elements_text(${JSON.stringify(endpointIds)}::jsonb) as x)
        and u.held + u.settled > c.value`),
  );
}

/** The tight endpoint's spend per UTC day from the ledger alone (held, settled and expired). */
async function ledgerSpendByDay(db: Db, endpointId: number): Promise<{ day: string; spent: number }[]> {
  const rows = resultRows<{ day: string; spent: string | number }>(
    await db.execute(sql`select (created_at at time zone 'utc')::date::text as day,
        sum(case state when 'settled' then settled_amount when 'released' then 0 else amount end) as spent
      from reservations where endpoint_id = ${endpointId} group by 1`),
  );
  return rows.map((r) => ({ day: r.day, spent: Number(r.spent) }));
}

/**
 * The primary's WAL senders, for the --sync-off run: stopped (SIGSTOP), they leave the standbys
 * behind. (Stopping the standbys' WAL receivers does not: the kernel keeps receiving into their
 * socket buffers, and they read it all once resumed.)
 */
function walSenders(leaderPort: number): number[] {
  const leader = state().nodes.find((n) => n.pgPort === leaderPort);
  const pm = leader ? postmasterPid(leader.dataDir) : undefined;
  if (!pm) return [];
  return childPids(pm).filter((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, "utf8").includes("walsender");
    } catch {
      return false;
    }
  });
}

/**
 * Every half second, asks each node directly whether it is a standby and how many connections of
 * the app's pools (application_name "ceilings") it holds: a pool connection on a standby is a
 * pool that lost the primary. Returns a stop function resolving to what was seen.
 */
function watchStandbys(): () => Promise<string[]> {
  const seen: string[] = [];
  let running = true;
  const sample = async (port: number) => {
    const client = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, { max: 1, connect_timeout: 1, fetch_types: false, onnotice: () => {} });
    try {
      const rows = await Promise.race([
        client<{ standby: boolean; app: string }[]>`select pg_is_in_recovery() as standby,
          (select count(*) from pg_stat_activity where application_name = 'ceilings')::text as app`,
        sleep(1000).then(() => []),
      ]);
      const row = rows[0];
      if (row?.standby && Number(row.app) > 0) seen.push(`${new Date().toISOString().slice(11, 23)} ${row.app} on standby :${port}`);
    } catch {
      // A node that is down holds no connections.
    } finally {
      await client.end({ timeout: 0 }).catch(() => undefined);
    }
  };
  const loop = (async () => {
    while (running) {
      await Promise.all(config.pgPorts.map(sample));
      await sleep(500);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return seen;
  };
}

const WEB_PORT = Number(process.env.HA_TEST_WEB_PORT ?? 3190);
const API_PORT = Number(process.env.HA_TEST_API_PORT ?? 3191);

/**
 * The API server services are told to use (npm run api) on the multi-host URL, for the client
 * that calls over HTTP; its log goes to logs/api.log.
 */
async function startApiServer(): Promise<string> {
  const apiUrl = `http://127.0.0.1:${API_PORT}`;
  apiServer = spawn(process.execPath, ["--import", "tsx", path.join("scripts", "api.ts")], {
    cwd: path.resolve(__dirname, "..", ".."),
    env: { ...process.env, DATABASE_URL: url, API_PORT: String(API_PORT), API_HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = createWriteStream(path.join(config.dir, "logs", "api.log"));
  apiServer.stdout?.pipe(out);
  apiServer.stderr?.pipe(out);
  await until("the API server", 60_000, async () => ((await fetch(`${apiUrl}/api/health`)).ok ? true : undefined));
  return apiUrl;
}
const BUILD_DIR = ".next-e2e";
const DASHBOARD_LOG = () => path.join(config.dir, "dashboard.log");

type DashboardWatch = { pages: number; failingOver: number; normal: number; errors: string[] };

/**
 * The dashboard on the cluster: the production build e2e made (npm test runs e2e first), served
 * by `next start` on the multi-host URL and asked for the overview every half second during the
 * kills, with a session cookie that is not valid: a page answers 307 to sign in once the layout
 * passed its database check, 200 "failing over" while no node answers, and must never be a 500.
 * Undefined when there is no build to serve.
 */
function watchDashboard(): { stop: () => Promise<DashboardWatch> } | undefined {
  if (!existsSync(path.join(BUILD_DIR, "BUILD_ID"))) return undefined;
  const logFd = openSync(DASHBOARD_LOG(), "w");
  const web = spawn(
    process.execPath,
    [path.join("node_modules", "next", "dist", "bin", "next"), "start", "--hostname", "127.0.0.1", "--port", String(WEB_PORT)],
    {
      cwd: path.resolve(__dirname, "..", ".."),
      env: {
        ...process.env,
        DATABASE_URL: url,
        NEXT_DIST_DIR: BUILD_DIR,
        NEXTAUTH_URL: `http://127.0.0.1:${WEB_PORT}`,
        NEXTAUTH_SECRET: createHash("sha256").update(String(Date.now())).digest("hex"),
        WORKER_IN_SERVER: "false",
      },
      // Kept in the cluster's folder: a dashboard answering 500 says why there (printed on failure).
      stdio: ["ignore", logFd, logFd],
    },
  );
  closeSync(logFd);
  dashboard = web;
  const seen: DashboardWatch = { pages: 0, failingOver: 0, normal: 0, errors: [] };
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const response = await fetch(`http://127.0.0.1:${WEB_PORT}/`, {
          headers: { cookie: "next-auth.session-token=not-a-session" },
          redirect: "manual",
          signal: AbortSignal.timeout(10_000),
        });
        const body = await response.text();
        seen.pages++;
        if (response.status === 200 && body.includes("database is failing over")) seen.failingOver++;
        else if (response.status === 307) seen.normal++;
        else seen.errors.push(`${new Date().toISOString().slice(11, 23)} ${response.status}`);
      } catch {
        // Not listening yet (or a timeout while starting): not an answer.
      }
      await sleep(500);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      web.kill("SIGTERM");
      return seen;
    },
  };
}

async function main(): Promise<number> {
  const started = Date.now();
  // One run per folder: a second run would stop the first one's cluster. A run that died without
  // cleaning up (SIGKILL) left its owner file naming a dead pid; its cluster is stopped here.
  const owner = `${config.dir}.owner`;
  const previous = existsSync(owner) ? Number(readFileSync(owner, "utf8")) : 0;
  if (previous && previous !== process.pid && isAlive(previous)) {
    throw new Error(`another test:ha (pid ${previous}) is running in ${config.dir}`);
  }
  writeFileSync(owner, String(process.pid));
  ownsFolder = true;
  if (existsSync(config.dir)) await down(config.dir, log).catch(() => undefined);
  mkdirSync(config.dir, { recursive: true });
  log(`cluster in ${config.dir}, ${config.synchronous ? `synchronous${config.strict ? " strict" : ""}` : "ASYNCHRONOUS"} replication`);
  await up(config, log);
  admin = openPostgres(url, { max: 4, connectTimeoutSeconds: 2 });
  await migrateDatabase(admin);
  const db = admin.db;
  const roomy = await makeEndpoint(db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000_000 }] });
  // Tight enough that callers hit it all the time: overspend would show here.
  const tight = await makeEndpoint(db, {
    ceilings: [
      { metric: "units", scope: "global", window: "utc_day", value: TIGHT_VALUE },
      { metric: "calls", scope: "caller", window: "utc_day", value: 1_000_000 },
    ],
  });
  const switchable = await makeEndpoint(db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 1_000_000 }] });
  const endpointIds = [roomy.endpointId, tight.endpointId, switchable.endpointId];
  log(`URL ${url}`);

  // client-a through the library, client-b as a service elsewhere: over HTTP to npm run api.
  const apiUrl = await startApiServer();
  const key = await createApiKey(db, {
    name: "test:ha client-b",
    binding: { kind: "trusted" },
    endpointKeys: [roomy.key, tight.key],
    actor: { type: "system", name: "test:ha" },
  });
  // client-c's URL names a host that accepts TCP and never answers, first: it must cost nothing.
  silentPort = await silent.listen();
  const withSilentHost = url.replace("@", `@127.0.0.1:${silentPort},`);
  startWorker("client-a", [roomy.key, roomy.key, tight.key]);
  startWorker("client-b", [roomy.key, roomy.key, tight.key], { http: { url: apiUrl, key: key.secret } });
  startWorker("client-c", [roomy.key, roomy.key, tight.key], { databaseUrl: withSilentHost });
  await until("the clients ready", 60_000, async () => (workers.every((w) => w.out.startsWith("ready\n")) ? true : undefined));
  log(`${workers.length} clients × ${LOOPS} callers; client-c on ${withSilentHost.replace(/^postgres:\/\/[^@]*@/, "")}`);
  const stopPeaks = watchConnectionPeaks();
  await sleep(4000);
  log(`connections in steady state: ${connectionCounts()}`);

  const stopWatching = watchStandbys();
  const watchingDashboard = syncOff ? undefined : watchDashboard();
  // Up before the first kill, so the page is seen both ways.
  if (watchingDashboard) await sleep(3000);
  const kills: Kill[] = [];
  const switchVerdicts: string[] = [];
  let syncOffNote = "";
  if (!syncOff) {
    const plan: Kill["kind"][] = ["primary", "primary", "standby", "primary"];
    for (const kind of plan) {
      kills.push(
        await killAndRecover(db, kind, roomy.key, async () => {
          switchVerdicts.push(await killSwitchBinds(db, switchable.key));
          log(`kill switch right after the failover: next call ${switchVerdicts.at(-1)}`);
        }),
      );
      await sleep(3000);
    }
  } else {
    const ms = await waitForMembers(config, "a healthy cluster", (m) => healthy(config, m), 60_000);
    const leader = ms.find(isLeader);
    if (!leader) throw new Error("no leader");
    const paused = walSenders(leader.port);
    for (const pid of paused) process.kill(pid, "SIGSTOP");
    log(`standbys lag: the primary's WAL senders ${paused.join(" ")} stopped; burst for 1 s`);
    await sleep(1000);
    const pids = crashNode(state(), nodeIndex(leader), { wholeMachine: true });
    const at = Date.now();
    log(`kill -9 of every process of primary ${leader.name}, pids ${pids.join(" ")}`);
    const after = await waitForMembers(config, "a new leader", (m) => m.some((x) => isLeader(x) && x.name !== leader.name), 40_000).catch(() => undefined);
    if (after) {
      kills.push({ kind: "primary", node: leader.name, at, newLeader: after.find(isLeader)?.name, electedMs: Date.now() - at, connections: [] });
      log(`${after.find(isLeader)?.name} leads after ${Date.now() - at} ms`);
    } else {
      syncOffNote = "no standby was promoted within 40 s (maximum_lag_on_failover kept the lagging standbys out); restarting the old primary";
      log(syncOffNote);
      startNode(state(), nodeIndex(leader));
    }
    await sleep(5000);
  }

  // The cluster is whole again: from here every pool must be on the primary. A pool left on a
  // standby (postgres.js's own host choice did that) answers unavailable for every batch it sends
  // there; slow answers under load (deadline, lock_timeout) are not a failover's leftovers.
  for (const w of workers) w.child.stdin.write("mark\n");
  await sleep(5000);
  for (const w of workers) w.child.stdin.end("stop\n");
  const onStandby = await stopWatching();
  const peaks = stopPeaks();
  // A client's URL names 3 nodes (client-c 4 hosts, with the silent one): its probes may be 4.
  const allowed = connectionBound(config.pgPorts.length + 1).peak;
  const overBound = [...peaks].filter(([, n]) => n > allowed).map(([name, n]) => `${name} ${n}`);
  const pages = await watchingDashboard?.stop();
  const codes = await Promise.all(workers.map((w) => Promise.race([w.exited, sleep(30_000).then(() => "timeout")])));
  const summaries = workers.map((w) => JSON.parse(w.out.slice("ready\n".length).trim() || "{}") as Record<string, number | Record<string, number>>);
  const total = (key: string) => summaries.reduce((s, x) => s + (typeof x[key] === "number" ? x[key] : 0), 0);
  const leftovers = summaries.flatMap((s, i) =>
    Object.entries(typeof s.afterRecovery === "object" ? s.afterRecovery : {})
      .filter(([reason]) => reason !== "deadline" && reason !== "lock_timeout")
      .map(([reason, n]) => `${workers[i]?.name}: ${n} ${reason}`),
  );

  // The checker, on whatever node leads now.
  const records = readRecords();
  const ids = [...records.grants.keys()];
  const found = await until("the ledger", 60_000, () => ledger(db, ids));
  const lost = ids.filter((id) => !found.has(id));
  const lostSettles = [...records.settled].filter(([id, actual]) => {
    const row = found.get(id);
    return !row || row.state !== "settled" || Number(row.settled_amount) !== actual;
  });
  const lostReleases = [...records.released].filter((id) => found.get(id)?.state !== "released");
  const overspent = await overspentCounters(db, endpointIds);
  const tightDays = await ledgerSpendByDay(db, tight.endpointId);
  const ledgerOver = tightDays.filter((d) => d.spent > TIGHT_VALUE);
  const drift = (await reconcileCounters(db)).filter((d) => endpointIds.includes(d.endpointId));

  const primaries = kills.filter((k) => k.kind === "primary");
  const grantTimes = [...records.grants.values()].map((g) => g.at).sort((a, b) => a - b);
  const perKill = kills.map((k, i) => {
    const next = kills[i + 1]?.at ?? Date.now();
    return { ...k, unavailableS: unavailableSeconds(grantTimes, k.at, next), byClient: windowsByClient(records, k.at, next) };
  });
  const slow = perKill
    .filter((k) => k.kind === "primary")
    .flatMap((k) =>
      k.byClient.filter((w) => w.seconds * 1000 > GRANT_WITHIN_MS).map((w) => `${w.client} ${w.seconds.toFixed(1)} s after the kill of ${k.node}`),
    );
  // An unavailable settle or release that said it was not applied must have left the reservation held.
  const dishonest = [...records.notApplied].filter((id) => {
    const state = found.get(id)?.state;
    return state === "settled" || state === "released";
  });
  const down_ = perKill.filter((k) => k.kind === "primary").map((k) => k.unavailableS);
  // Each client process must be granted again after every kill, by itself, without a restart.
  const stuck: string[] = [];
  for (const k of kills) {
    for (const w of workers) {
      const first = [...records.grants.values()].filter((g) => g.client === w.name && g.at > k.at).reduce((m, g) => Math.min(m, g.at), Infinity);
      if (first - k.at > RESUME_WITHIN_MS) stuck.push(`${w.name} after the ${k.kind} kill of ${k.node}`);
    }
  }

  console.log("\n==> test:ha report");
  console.log(`  replication: ${config.synchronous ? `synchronous${config.strict ? " (strict)" : ""}` : "asynchronous"}`);
  console.log(
    `  ops: ${total("reserves")} reserves (${total("granted")} granted, ${total("unavailable")} unavailable, ${total("refused")} refused by a ceiling), ${total("settled")} settled, ${total("released")} released, ${total("settleUnavailable")} settle/release unavailable`,
  );
  console.log(`  client exits: ${codes.join(", ")}; unavailable reasons: ${JSON.stringify(summaries.map((s) => s.unavailableReasons ?? {}))}`);
  for (const k of perKill) {
    console.log(
      `  kill ${k.kind.padEnd(7)} ${k.node}: ${k.newLeader ? `${k.newLeader} elected in ${((k.electedMs ?? 0) / 1000).toFixed(1)} s, ` : ""}grants again after ${k.grantsAfterMs === undefined ? "?" : (k.grantsAfterMs / 1000).toFixed(1)} s, answers unavailable ${k.unavailableS.toFixed(1)} s`,
    );
    console.log(`    window (longest gap between grants) by client: ${k.byClient.map((w) => `${w.client} ${w.seconds.toFixed(1)} s`).join(", ")}`);
    for (const line of k.connections) console.log(`    connections ${line}`);
  }
  console.log(`  connections at most, per process (bound ${allowed}): ${[...peaks].map(([name, n]) => `${name} ${n}`).join(", ")}`);
  console.log(`  primary kills not answered by a grant to every client within ${GRANT_WITHIN_MS / 1000} s: ${slow.length ? slow.join("; ") : "none"}`);
  console.log(
    `  settles/releases answered unavailable with mayHaveApplied: false: ${records.notApplied.size}, of which applied all the same: ${dishonest.length}`,
  );
  if (down_.length > 0)
    console.log(`  primary failovers: ${primaries.length}; unavailable seconds p50 ${percentile(down_, 50).toFixed(1)}, max ${Math.max(...down_).toFixed(1)}`);
  console.log(`  unavailable answers in the 5 s after recovery (not deadline or lock_timeout): ${leftovers.length ? leftovers.join(", ") : "none"}`);
  console.log(
    pages
      ? `  dashboard overview during the kills: ${pages.pages} pages, ${pages.failingOver} "failing over", ${pages.normal} normal, errors: ${pages.errors.length ? pages.errors.slice(0, 5).join(", ") : "none"}`
      : `  dashboard: SKIPPED, no production build in ${BUILD_DIR} (npm run test:e2e makes one)`,
  );
  console.log(`  samples with a pool connection on a standby: ${onStandby.length}${onStandby.length ? ` (${onStandby.slice(0, 3).join("; ")}…)` : ""}`);
  console.log(`  clients not granted again within ${RESUME_WITHIN_MS / 1000} s of a kill: ${stuck.length ? stuck.join("; ") : "none"}`);
  const byClient = workers.map((w) => `${w.name} ${[...records.grants.values()].filter((g) => g.client === w.name).length}`);
  console.log(`  grants by client (client-a the library, client-b HTTP through npm run api): ${byClient.join(", ")}`);
  console.log(`  grants recorded: ${ids.length}; lost: ${lost.length}${lost.length ? ` (${lost.slice(0, 5).join(", ")}…)` : ""}`);
  console.log(`  settles told, not in the ledger: ${lostSettles.length}; releases told, not in the ledger: ${lostReleases.length}`);
  console.log(
    `  overspent counters: ${overspent.length}; ledger spend above ${TIGHT_VALUE} on the tight ceiling: ${ledgerOver.length} (days ${JSON.stringify(tightDays)})`,
  );
  console.log(`  counter-vs-ledger drift after reconcile: ${drift.length}`);
  if (!syncOff) console.log(`  kill switch right after each failover, next call: ${switchVerdicts.join(", ")}`);
  if (syncOffNote) console.log(`  ${syncOffNote}`);
  console.log(`  took ${((Date.now() - started) / 1000).toFixed(0)} s`);

  if (syncOff) {
    console.log(
      lost.length > 0
        ? `  the checker caught ${lost.length} lost grant(s) with asynchronous replication: acknowledged on the old primary, never on the new one`
        : "  the checker found no lost grant: no acknowledged grant was missing from the promoted standby",
    );
    return 0;
  }
  const failures: string[] = [];
  if (primaries.length < 3 || kills.length - primaries.length < 1) failures.push("fewer kills than planned");
  if (lost.length > 0) failures.push(`${lost.length} lost grants`);
  if (pages && (pages.errors.length > 0 || pages.failingOver === 0 || pages.normal === 0)) {
    failures.push(`dashboard: ${pages.errors.length} errors, ${pages.failingOver} "failing over" pages, ${pages.normal} normal`);
    const output = existsSync(DASHBOARD_LOG())
      ? readFileSync(DASHBOARD_LOG(), "utf8")
          .split("\n")
          .filter((l) => !l.startsWith("Cannot stat file"))
      : [];
    log(`the dashboard's last lines (${DASHBOARD_LOG()}):\n${output.slice(-40).join("\n")}`);
  }
  if (onStandby.length > 0) failures.push(`pool connections on a standby in ${onStandby.length} samples`);
  if (stuck.length > 0) failures.push(`clients did not resume: ${stuck.join("; ")}`);
  if (slow.length > 0) failures.push(`not granted again within ${GRANT_WITHIN_MS / 1000} s: ${slow.join("; ")}`);
  if (overBound.length > 0) failures.push(`more connections than the bound of ${allowed}: ${overBound.join(", ")}`);
  if (dishonest.length > 0) failures.push(`${dishonest.length} settles/releases said not applied, but were`);
  if (leftovers.length > 0) failures.push(`pools still failing after recovery: ${leftovers.join(", ")}`);
  if (lostSettles.length + lostReleases.length > 0) failures.push("acknowledged settles or releases missing");
  if (overspent.length > 0 || ledgerOver.length > 0) failures.push("overspend");
  if (drift.length > 0) failures.push(`${drift.length} drifted counters`);
  if (switchVerdicts.length === 0 || switchVerdicts.some((v) => v !== "kill_switch")) failures.push(`kill switch did not bind: ${switchVerdicts.join(", ")}`);
  if (codes.some((c) => c !== 0)) failures.push(`a client exited ${codes.join(", ")}`);
  if (total("granted") === 0) failures.push("nothing granted");
  if (failures.length > 0) {
    console.log(`  FAILED: ${failures.join("; ")}`);
    return 1;
  }
  console.log("  passed: 0 lost, 0 overspent, 0 drift, kill switch bound");
  return 0;
}

const timer = setTimeout(() => {
  log(`timed out after ${TIMEOUT_S} s: stopping the cluster`);
  void cleanup().finally(() => process.exit(1));
}, TIMEOUT_S * 1000);

main()
  .catch((error: unknown) => {
    console.error(`test:ha failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  })
  .then(async (code) => {
    clearTimeout(timer);
    await cleanup();
    process.exit(code);
  });
