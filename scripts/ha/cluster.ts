import { spawn, spawnSync } from "node:child_process";
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { maxConnectionsFor } from "@/lib/connection-bound";

// A local high-availability cluster for trying and testing: three etcd members (the Raft store
// Patroni keeps the leader lock in) and three Patroni-managed PostgreSQL 15 nodes, all on
// loopback ports, all data under one folder. Every process is started by this module, its pid is
// written to <dir>/cluster.json, and `down` stops exactly those pids (and the postmasters their
// data folders name), never anything found by name: the machine's own Postgres runs as the same
// `postgres` user and must never be touched.

const RUN_AS = "postgres";

export type ClusterConfig = {
  /** Absolute folder holding every data folder, config, log and the state file. */
  dir: string;
  /** Patroni's scope: the cluster's name in etcd. */
  scope: string;
  pgPorts: number[];
  restPorts: number[];
  /** Client port and peer port of each etcd member. */
  etcdPorts: { client: number; peer: number }[];
  /** synchronous_mode: a commit is acknowledged only once a standby has flushed it. */
  synchronous: boolean;
  /** synchronous_mode_strict: with no standby left, writes stop instead of going asynchronous. */
  strict: boolean;
  database: string;
  /** PostgreSQL's binaries (Debian: /usr/lib/postgresql/15/bin). */
  binDir: string;
  /** App processes (dashboard, API server, worker, library users) max_connections is sized for. */
  appProcesses: number;
};

export type NodeState = { name: string; pgPort: number; restPort: number; pid: number; dataDir: string; config: string };
export type EtcdState = { name: string; client: number; peer: number; pid: number; dataDir: string };
export type ClusterState = { config: ClusterConfig; etcd: EtcdState[]; nodes: NodeState[] };

function intList(value: string | undefined, fallback: number[]): number[] {
  if (!value) return fallback;
  const list = value.split(",").map((s) => Number(s.trim()));
  if (list.length !== fallback.length || list.some((n) => !Number.isInteger(n) || n < 1024 || n > 65535)) {
    throw new Error(`expected ${fallback.length} comma-separated ports from 1024 to 65535, got "${value}"`);
  }
  return list;
}

function onOff(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  if (value === "on" || value === "true" || value === "1") return true;
  if (value === "off" || value === "false" || value === "0") return false;
  throw new Error(`expected on or off, got "${value}"`);
}

/**
 * The configuration from the environment (<prefix>DIR, PG_PORTS, REST_PORTS, ETCD_PORTS, SYNC,
 * STRICT, APP_PROCESSES). `npm run ha` reads HA_*, the test HA_TEST_*, with other default ports and folder, so a
 * tried cluster and a test run coexist and the test never wipes the tried cluster's folder.
 */
export function configFromEnv(
  source: NodeJS.ProcessEnv,
  prefix: "HA_" | "HA_TEST_",
  defaults: { dir: string; pgPorts: number[]; restPorts: number[]; etcdPorts: number[] },
): ClusterConfig {
  const get = (name: string) => source[prefix + name];
  const etcd = intList(get("ETCD_PORTS"), defaults.etcdPorts);
  return {
    dir: path.resolve(get("DIR") ?? defaults.dir),
    scope: "ceilings-ha",
    pgPorts: intList(get("PG_PORTS"), defaults.pgPorts),
    restPorts: intList(get("REST_PORTS"), defaults.restPorts),
    etcdPorts: [0, 1, 2].map((i) => ({ client: etcd[2 * i] ?? 0, peer: etcd[2 * i + 1] ?? 0 })),
    synchronous: onOff(get("SYNC"), true),
    strict: onOff(get("STRICT"), true),
    database: "ceilings",
    binDir: get("PG_BIN_DIR") ?? "/usr/lib/postgresql/15/bin",
    appProcesses: count(get("APP_PROCESSES"), 6),
  };
}

function count(value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`expected a whole number from 1 to 100, got "${value}"`);
  return n;
}

export const DEFAULT_PORTS = {
  pgPorts: [5441, 5442, 5443],
  restPorts: [8008, 8009, 8010],
  etcdPorts: [2379, 2380, 2381, 2382, 2383, 2384],
};

/** The URL the app, worker and CLIs take: every node, and only a primary accepted. */
export function connectionUrl(config: ClusterConfig): string {
  const hosts = config.pgPorts.map((p) => `127.0.0.1:${p}`).join(",");
  return `postgres://postgres@${hosts}/${config.database}?target_session_attrs=primary`;
}

const statePath = (config: Pick<ClusterConfig, "dir">) => path.join(config.dir, "cluster.json");

export function readState(dir: string): ClusterState | undefined {
  const file = statePath({ dir });
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as ClusterState;
}

function writeState(state: ClusterState): void {
  writeFileSync(statePath(state.config), JSON.stringify(state, null, 2));
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie answers kill(0) but is dead; /proc says which.
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

function ownedByPostgres(target: string): void {
  if (process.getuid?.() !== 0) return;
  const { uid, gid } = postgresIds();
  chownSync(target, uid, gid);
}

let ids: { uid: number; gid: number } | undefined;
function postgresIds(): { uid: number; gid: number } {
  if (ids) return ids;
  const uid = Number(spawnSync("id", ["-u", RUN_AS], { encoding: "utf8" }).stdout.trim());
  const gid = Number(spawnSync("id", ["-g", RUN_AS], { encoding: "utf8" }).stdout.trim());
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`user ${RUN_AS} not found: install postgresql`);
  ids = { uid, gid };
  return ids;
}

/** Postgres refuses to run as root: as root, everything runs as the postgres user via runuser. */
function asPostgres(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ["runuser", ["-u", RUN_AS, "--", command, ...args]] : [command, args];
}

/** Starts a command as the postgres user in a process group of its own, logging to a file. */
function startAs(command: string, args: string[], logFile: string, cwd: string): number {
  const out = openSync(logFile, "a");
  const [program, argv] = asPostgres(command, args);
  const child = spawn(program, argv, {
    cwd,
    detached: true,
    stdio: ["ignore", out, out],
  });
  closeSync(out);
  child.unref();
  if (!child.pid) throw new Error(`could not start ${command}`);
  return child.pid;
}

function etcdEndpoints(config: ClusterConfig): string[] {
  return config.etcdPorts.map((p) => `127.0.0.1:${p.client}`);
}

/**
 * Patroni's configuration for one node (JSON is YAML). The settings that matter are explained in
 * docs/high-availability.md ("Settings that matter").
 */
function patroniConfig(config: ClusterConfig, i: number, dataDir: string): object {
  const name = `node${i + 1}`;
  const pgPort = config.pgPorts[i];
  const restPort = config.restPorts[i];
  return {
    scope: config.scope,
    name,
    restapi: { listen: `127.0.0.1:${restPort}`, connect_address: `127.0.0.1:${restPort}` },
    etcd3: { hosts: etcdEndpoints(config) },
    bootstrap: {
      dcs: {
        // The leader lock lives ttl seconds; Patroni renews it every loop_wait. A dead primary is
        // replaced after at most ttl + loop_wait: the seconds a failover refuses reservations.
        // retry_timeout bounds etcd and Postgres retries so that loop_wait + 2 * retry_timeout <= ttl.
        ttl: 10,
        loop_wait: 2,
        retry_timeout: 4,
        // Only a standby within 1 MB of the dead primary may be promoted (asynchronous mode only:
        // in synchronous mode only the synchronous standby may be).
        maximum_lag_on_failover: 1048576,
        synchronous_mode: config.synchronous,
        synchronous_mode_strict: config.synchronous && config.strict,
        postgresql: {
          // A killed primary comes back as a standby: pg_rewind cuts off what it wrote that the
          // new primary never had, instead of a full copy.
          use_pg_rewind: true,
          use_slots: true,
          parameters: {
            // Every app process's peak (lib/connection-bound.ts), all on the one primary after a
            // failover, and room for Patroni, replication and an operator.
            max_connections: maxConnectionsFor(config.appProcesses, config.pgPorts.length),
            wal_level: "replica",
            hot_standby: "on",
            wal_log_hints: "on",
            max_wal_senders: 10,
            max_replication_slots: 10,
            wal_keep_size: "128MB",
            // On a commit the primary waits until a synchronous standby has flushed the WAL.
            synchronous_commit: "on",
            // How long a standby waits before asking for WAL again after a failure (5 s by
            // default). Seen in test:ha: a standby promoted while it waited became writable only
            // 5 s after Patroni's promote, and the remaining standby, refused at first (its slot
            // not yet made on the new primary), streamed again 5 s later; under strict
            // synchronous mode no commit returns until it does. Each added 5 s to every failover.
            wal_retrieve_retry_interval: "500ms",
          },
        },
      },
      initdb: [{ encoding: "UTF8" }, { locale: "C" }, "data-checksums"],
      pg_hba: ["host replication replicator 127.0.0.1/32 trust", "host all all 127.0.0.1/32 trust", "local all all trust"],
    },
    postgresql: {
      listen: `127.0.0.1:${pgPort}`,
      connect_address: `127.0.0.1:${pgPort}`,
      data_dir: dataDir,
      bin_dir: config.binDir,
      pgpass: path.join(config.dir, name, "pgpass"),
      authentication: {
        superuser: { username: "postgres", password: "postgres" },
        replication: { username: "replicator", password: "replicator" },
      },
      parameters: { unix_socket_directories: path.join(config.dir, name) },
    },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
}

export type Member = { name: string; role: string; state: string; host: string; port: number; timeline?: number; lag?: number | string };

/** The members as Patroni's REST API reports them, from the first node that answers. */
export async function members(config: ClusterConfig, timeoutMs = 1000): Promise<Member[] | undefined> {
  for (const port of config.restPorts) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/cluster`, { signal: AbortSignal.timeout(timeoutMs) });
      if (!response.ok) continue;
      const body = (await response.json()) as { members?: Member[] };
      if (Array.isArray(body.members)) return body.members;
    } catch {
      // That node is down: ask the next.
    }
  }
  return undefined;
}

export const isLeader = (m: Member) => m.role === "leader" && m.state === "running";
// Patroni 3.0.2 reports a replica as "running"; later releases say "streaming".
export const isSyncStandby = (m: Member) => m.role === "sync_standby" && (m.state === "running" || m.state === "streaming");

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Waits until `check` passes on the members, or throws after timeoutMs. */
export async function waitForMembers(config: ClusterConfig, what: string, check: (ms: Member[]) => boolean, timeoutMs: number): Promise<Member[]> {
  const until = Date.now() + timeoutMs;
  let last: Member[] | undefined;
  while (Date.now() < until) {
    last = await members(config);
    if (last && check(last)) return last;
    await sleep(250);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; members: ${JSON.stringify(last ?? "no answer")}`);
}

/** Every node running or streaming, one leader and, in synchronous mode, a synchronous standby. */
export function healthy(config: ClusterConfig, ms: Member[]): boolean {
  const up = ms.filter((m) => m.state === "running" || m.state === "streaming");
  return up.length === config.pgPorts.length && ms.filter(isLeader).length === 1 && (!config.synchronous || ms.some(isSyncStandby));
}

async function etcdHealthy(config: ClusterConfig): Promise<boolean> {
  for (const p of config.etcdPorts) {
    try {
      const response = await fetch(`http://127.0.0.1:${p.client}/health`, { signal: AbortSignal.timeout(1000) });
      const body = (await response.json()) as { health?: string };
      if (body.health !== "true") return false;
    } catch {
      return false;
    }
  }
  return true;
}

function startEtcd(config: ClusterConfig, i: number): EtcdState {
  const name = `etcd${i + 1}`;
  const p = config.etcdPorts[i];
  if (!p) throw new Error(`no ports for ${name}`);
  const dataDir = path.join(config.dir, name);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  ownedByPostgres(dataDir);
  const initialCluster = config.etcdPorts.map((q, j) => `etcd${j + 1}=http://127.0.0.1:${q.peer}`).join(",");
  const args = [
    "--name",
    name,
    "--data-dir",
    dataDir,
    "--listen-client-urls",
    `http://127.0.0.1:${p.client}`,
    "--advertise-client-urls",
    `http://127.0.0.1:${p.client}`,
    "--listen-peer-urls",
    `http://127.0.0.1:${p.peer}`,
    "--initial-advertise-peer-urls",
    `http://127.0.0.1:${p.peer}`,
    "--initial-cluster",
    initialCluster,
    "--initial-cluster-token",
    `${config.scope}-${path.basename(config.dir)}`,
    "--initial-cluster-state",
    "new",
    // Two cores shared with other work: the default 100 ms heartbeat / 1 s election timeout
    // calls spurious elections when a member is starved for a moment.
    "--heartbeat-interval",
    "200",
    "--election-timeout",
    "2000",
    "--logger",
    "zap",
  ];
  const pid = startAs("etcd", args, path.join(config.dir, "logs", `${name}.log`), config.dir);
  return { name, client: p.client, peer: p.peer, pid, dataDir };
}

/** Starts (or restarts) the Patroni of node i; its Postgres data folder is kept. */
export function startNode(state: ClusterState, i: number): NodeState {
  const { config } = state;
  const name = `node${i + 1}`;
  const nodeDir = path.join(config.dir, name);
  const dataDir = path.join(nodeDir, "data");
  const file = path.join(nodeDir, "patroni.yml");
  if (!existsSync(file)) {
    mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
    ownedByPostgres(nodeDir);
    writeFileSync(file, JSON.stringify(patroniConfig(config, i, dataDir), null, 2));
    ownedByPostgres(file);
  }
  const pid = startAs("patroni", [file], path.join(config.dir, "logs", `${name}.log`), nodeDir);
  const node: NodeState = { name, pgPort: config.pgPorts[i] ?? 0, restPort: config.restPorts[i] ?? 0, pid, dataDir, config: file };
  state.nodes[i] = node;
  writeState(state);
  return node;
}

/** Starts the cluster; refuses if one is already running in the folder or a port is taken. */
export async function up(config: ClusterConfig, log: (line: string) => void = console.log): Promise<ClusterState> {
  const uid = process.getuid?.();
  if (uid !== 0 && uid !== postgresIds().uid) throw new Error(`run as root (Patroni and etcd then run as ${RUN_AS} via runuser) or as ${RUN_AS}`);
  const existing = readState(config.dir);
  if (existing && runningPids(existing).length > 0) {
    throw new Error(`a cluster is already running from ${config.dir} (pids ${runningPids(existing).join(", ")}): npm run ha -- down first`);
  }
  for (const bin of ["etcd", "patroni", path.join(config.binDir, "postgres")]) {
    if (spawnSync("sh", ["-c", `command -v ${bin}`]).status !== 0) {
      throw new Error(`${bin} not found: apt-get install -y patroni etcd-server etcd-client postgresql-15`);
    }
  }
  const ports = [...config.pgPorts, ...config.restPorts, ...config.etcdPorts.flatMap((p) => [p.client, p.peer])];
  const taken: number[] = [];
  for (const port of ports) if (!(await portFree(port))) taken.push(port);
  if (taken.length > 0) throw new Error(`ports in use on 127.0.0.1: ${taken.join(", ")} (set HA_PG_PORTS, HA_REST_PORTS, HA_ETCD_PORTS)`);

  // A fresh cluster every time: a leftover etcd or data folder from another cluster id would not join.
  rmSync(config.dir, { recursive: true, force: true });
  mkdirSync(path.join(config.dir, "logs"), { recursive: true });
  ownedByPostgres(config.dir);
  ownedByPostgres(path.join(config.dir, "logs"));
  const [program, argv] = asPostgres("test", ["-w", config.dir, "-a", "-x", config.dir]);
  if (spawnSync(program, argv).status !== 0) {
    throw new Error(`${RUN_AS} cannot reach ${config.dir} (a parent folder is closed to it): set HA_DIR or HA_TEST_DIR under /tmp`);
  }
  const state: ClusterState = { config, etcd: [], nodes: [] };
  writeState(state);
  for (let i = 0; i < config.etcdPorts.length; i++) {
    state.etcd.push(startEtcd(config, i));
    writeState(state);
  }
  const etcdUntil = Date.now() + 30_000;
  while (!(await etcdHealthy(config))) {
    if (Date.now() > etcdUntil) throw new Error(`etcd did not become healthy; see ${config.dir}/logs`);
    await sleep(250);
  }
  log(`etcd: ${config.etcdPorts.length} members healthy`);
  // The first node bootstraps alone, so the others clone it instead of racing to initialise.
  startNode(state, 0);
  await waitForMembers(config, "the first node to lead", (ms) => ms.some(isLeader), 90_000);
  for (let i = 1; i < config.pgPorts.length; i++) startNode(state, i);
  await waitForMembers(config, "every node to run", (ms) => healthy(config, ms), 120_000);
  log("patroni: leader and standbys running");
  await createDatabase(config);
  return state;
}

async function createDatabase(config: ClusterConfig): Promise<void> {
  const ms = await waitForMembers(config, "a leader", (m) => m.some(isLeader), 30_000);
  const leader = ms.find(isLeader);
  if (!leader) throw new Error("no leader");
  const psql = path.join(config.binDir, "psql");
  const base = ["-h", "127.0.0.1", "-p", String(leader.port), "-U", "postgres", "-d", "postgres", "-tAc"];
  const exists = spawnSync(psql, [...base, `select 1 from pg_database where datname = '${config.database}'`], { encoding: "utf8" });
  if (exists.status !== 0) throw new Error(`psql failed: ${exists.stderr}`);
  if (exists.stdout.trim() !== "1") {
    const created = spawnSync(psql, [...base, `create database ${config.database}`], { encoding: "utf8" });
    if (created.status !== 0) throw new Error(`create database failed: ${created.stderr}`);
  }
}

/** The postmaster pid a data folder names, if that process is alive. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    return isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The pids of the children of `pid` (runuser forks the real program and waits for it). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // Exited while we read.
    }
  }
  return out;
}

function runningPids(state: ClusterState): number[] {
  const pids = [...state.etcd.map((e) => e.pid), ...state.nodes.map((n) => n.pid)].filter(isAlive);
  for (const n of state.nodes) {
    const pm = postmasterPid(n.dataDir);
    if (pm) pids.push(pm);
  }
  return pids;
}

/** A signal to one pid that may have exited meanwhile. */
function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

async function waitGone(pids: number[], timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (pids.every((p) => !isAlive(p))) return true;
    await sleep(100);
  }
  return pids.every((p) => !isAlive(p));
}

/**
 * `kill -9` of a node's Patroni (the python process, not the runuser wrapper) and its postmaster:
 * the crash the chaos test inflicts (with wholeMachine, every Postgres process of the node).
 * Returns the pids killed.
 */
export function crashNode(state: ClusterState, i: number, options: { wholeMachine?: boolean } = {}): number[] {
  const node = state.nodes[i];
  if (!node) throw new Error(`no node ${i}`);
  const targets = [...childPids(node.pid), node.pid];
  const pm = postmasterPid(node.dataDir);
  // The machine gone at once: its backends and WAL senders too, which otherwise outlive a killed
  // postmaster for a moment and may still hand standbys the last WAL.
  if (pm && options.wholeMachine) targets.push(...childPids(pm));
  if (pm) targets.push(pm);
  for (const pid of targets) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  return targets;
}

/** Stops everything the state file names: Patroni first (it stops its Postgres), then etcd. */
export async function down(dir: string, log: (line: string) => void = console.log): Promise<void> {
  const state = readState(dir);
  if (!state) {
    log(`no cluster state in ${dir}: nothing to stop`);
    return;
  }
  const patroni = state.nodes.filter((n) => isAlive(n.pid));
  for (const n of patroni) signalGroup(n.pid, "SIGTERM");
  if (
    !(await waitGone(
      patroni.map((n) => n.pid),
      20_000,
    ))
  ) {
    for (const n of patroni) signalGroup(n.pid, "SIGKILL");
  }
  // Patroni detaches its postmaster; one left behind (Patroni killed, or stopped too fast) is
  // stopped by the pid its own data folder names.
  const postmasters = state.nodes.map((n) => postmasterPid(n.dataDir)).filter((p): p is number => p !== undefined);
  for (const pid of postmasters) signalPid(pid, "SIGINT"); // fast shutdown
  if (!(await waitGone(postmasters, 10_000))) for (const pid of postmasters) signalPid(pid, "SIGKILL");
  const etcd = state.etcd.filter((e) => isAlive(e.pid));
  for (const e of etcd) signalGroup(e.pid, "SIGTERM");
  if (
    !(await waitGone(
      etcd.map((e) => e.pid),
      10_000,
    ))
  )
    for (const e of etcd) signalGroup(e.pid, "SIGKILL");
  await waitGone(runningPids(state), 5_000);
  const left = runningPids(state);
  if (left.length > 0) throw new Error(`still running after down: pids ${left.join(", ")}`);
  log(`stopped ${patroni.length} patroni, ${postmasters.length} leftover postmaster(s), ${etcd.length} etcd from ${dir}`);
}
