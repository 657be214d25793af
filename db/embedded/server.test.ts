import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import { type Database, migrateDatabase, openPostgres, resultRows } from "@/db/client";
import { seedDemoIfEmpty } from "@/lib/demo";
import { tryPidLock } from "./pid-lock";
import { embeddedFiles, ensureEmbeddedServer, readEmbeddedConfig, runningPostmaster, stopEmbeddedServer } from "./server";

// The embedded engine on a real PostgreSQL 17 from node_modules: each test has a folder of its own
// and stops its server; other processes are real processes (tsx scripts), not simulated.

const roots: string[] = [];
function freshDataDir(): string {
  const root = mkdtempSync(path.join(tmpdir(), "ceilings-embedded-"));
  roots.push(root);
  // Parents that do not exist yet, as `.data/` in a fresh clone.
  return path.join(root, "nested", ".data");
}

afterAll(async () => {
  for (const root of roots) {
    await stopEmbeddedServer(path.join(root, "nested", ".data")).catch(() => false);
    rmSync(root, { recursive: true, force: true });
  }
});

function runScript(script: string, dataDir: string, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("npx", ["tsx", script, ...args], { env: { ...childEnv(), DATA_DIR: dataDir } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** The environment of this process without DATABASE_URL, so a child uses the embedded server. */
function childEnv(): NodeJS.ProcessEnv {
  // eslint-disable-next-line no-restricted-syntax -- handing this process's environment to a child
  const { DATABASE_URL: _ignored, ...rest } = process.env;
  return rest;
}

async function withDatabase<T>(url: string, work: (database: Database) => Promise<T>): Promise<T> {
  const database = openPostgres(url, { max: 4 });
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}

describe("the embedded Postgres server", () => {
  it("starts in a fresh folder on a kept loopback port with a 0600 password file", async () => {
    const dataDir = freshDataDir();
    const first = await ensureEmbeddedServer(dataDir);
    expect(first.startedHere).toBe(true);
    const config = readEmbeddedConfig(dataDir);
    expect(config?.port).toBe(first.config.port);
    expect(config?.port).not.toBe(5432);
    expect(statSync(embeddedFiles(dataDir).config).mode & 0o777).toBe(0o600);
    const settings = await withDatabase(first.url.replace(/\/[^/]*$/, "/postgres"), async ({ db }) =>
      resultRows<{ listen: string; version: string }>(
        await db.execute(sql`select current_setting('listen_addresses') as listen, current_setting('server_version_num') as version`),
      ),
    );
    expect(settings[0]?.listen).toBe("127.0.0.1");
    expect(Number(settings[0]?.version)).toBeGreaterThanOrEqual(170_000);

    // A second caller finds the running server instead of starting one; after a stop, the next
    // start reuses the port and password kept in the folder.
    const second = await ensureEmbeddedServer(dataDir);
    expect(second).toMatchObject({ startedHere: false, url: first.url });
    expect(await stopEmbeddedServer(dataDir)).toBe(true);
    const third = await ensureEmbeddedServer(dataDir);
    expect(third).toMatchObject({ startedHere: true, url: first.url });
    await stopEmbeddedServer(dataDir);
  }, 120_000);

  it("is shared: another process prints its URL (db:url), and two first starts at once make one server", async () => {
    const dataDir = freshDataDir();
    const [a, b] = await Promise.all([runScript("scripts/db-url.ts", dataDir), runScript("scripts/db-url.ts", dataDir)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    // The app's URL: the least-privilege role, not the superuser that migrated.
    expect(a.stdout.trim()).toMatch(/^postgres:\/\/ceilings_app:[^@]+@127\.0\.0\.1:\d+\/ceilings$/);
    expect(b.stdout.trim()).toBe(a.stdout.trim());
    // Migrated and seeded exactly once.
    const endpoints = await withDatabase(a.stdout.trim(), async ({ db }) =>
      resultRows<{ n: number }>(await db.execute(sql`select count(*)::int as n from endpoints`)),
    );
    expect(endpoints[0]?.n).toBe(7); // the demo catalog, lib/demo/ceilings.json
    await expect(withDatabase(a.stdout.trim(), ({ db }) => db.execute(sql`alter table audit_events disable trigger user`))).rejects.toThrow();
    await expect(withDatabase(a.stdout.trim(), ({ db }) => db.execute(sql`delete from audit_events`))).rejects.toThrow();
    await stopEmbeddedServer(dataDir);
  }, 180_000);

  it("comes back after kill -9 with every committed reservation and audit row, over a stale postmaster.pid", async () => {
    const dataDir = freshDataDir();
    const server = await ensureEmbeddedServer(dataDir);
    await withDatabase(server.url.replace(/\/[^/]*$/, "/postgres"), ({ db }) => db.execute(sql`create database ceilings`));
    const before = await withDatabase(server.url, async (database) => {
      await migrateDatabase(database);
      await seedDemoIfEmpty(database.db, { log: () => {}, bcryptCost: 4 });
      const answers = await Promise.all(
        Array.from({ length: 40 }, (_, i) => database.db.execute(sql`select ceilings.reserve('llm.chat', 10, ${`acct_${i % 4}`}, null)::text as answer`)),
      );
      const granted = answers.filter((r) => resultRows<{ answer: string }>(r)[0]?.answer.includes('"granted"')).length;
      await database.db.execute(sql`insert into audit_events (actor_type, actor, action, details) values ('cli', 'crash-test', 'test.marker', '{}'::jsonb)`);
      const counts = resultRows<{ reservations: number; audit: number }>(
        await database.db.execute(sql`select (select count(*)::int from reservations) as reservations, (select count(*)::int from audit_events) as audit`),
      );
      return { granted, ...counts[0] };
    });
    expect(before.granted).toBeGreaterThan(0);

    const postmaster = runningPostmaster(embeddedFiles(dataDir).pgdata);
    if (!postmaster) throw new Error("no postmaster");
    execFileSync("kill", ["-9", String(postmaster.pid)]);
    await waitFor(() => runningPostmaster(embeddedFiles(dataDir).pgdata) === undefined);
    // The pid in the left-over postmaster.pid now names a live process that is not postgres, of the
    // user postgres runs as (postgres ignores other users' processes there by itself).
    const squatter: ChildProcess = spawn("sleep", ["60"], postgresUser());
    const pidFile = path.join(embeddedFiles(dataDir).pgdata, "postmaster.pid");
    const lines = readFileSync(pidFile, "utf8").split("\n");
    lines[0] = String(squatter.pid);
    writeFileSync(pidFile, lines.join("\n"));
    // A process still working in the data folder stands for a child of the killed postmaster that
    // has not noticed yet: the new server must wait for it rather than start beside it.
    const lingerer: ChildProcess = spawn("sleep", ["60"], { ...postgresUser(), cwd: embeddedFiles(dataDir).pgdata });
    const lingerMs = 1_500;
    setTimeout(() => lingerer.kill("SIGKILL"), lingerMs);
    try {
      const began = Date.now();
      const again = await ensureEmbeddedServer(dataDir);
      expect(Date.now() - began).toBeGreaterThanOrEqual(lingerMs);
      expect(again.startedHere).toBe(true);
      const after = await withDatabase(again.url, async ({ db }) =>
        resultRows<{ reservations: number; audit: number; marker: number }>(
          await db.execute(sql`
            select (select count(*)::int from reservations) as reservations, (select count(*)::int from audit_events) as audit,
                   (select count(*)::int from audit_events where action = 'test.marker') as marker`),
        ),
      );
      expect(after[0]).toEqual({ reservations: before.reservations, audit: before.audit, marker: 1 });
    } finally {
      squatter.kill();
      lingerer.kill("SIGKILL");
      await stopEmbeddedServer(dataDir);
    }
  }, 180_000);
});

describe("the pid lock", () => {
  it("says who holds it while they live, and is taken over once they are gone", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "ceilings-lock-"));
    roots.push(dir);
    const file = path.join(dir, "demo.lock");
    const holder = spawn("sleep", ["60"]);
    writeFileSync(file, `${holder.pid}\n`);
    expect(tryPidLock(file)).toEqual({ heldBy: holder.pid });
    holder.kill("SIGKILL");
    await waitFor(() => holder.exitCode !== null || holder.signalCode !== null);
    const taken = tryPidLock(file);
    expect("release" in taken).toBe(true);
    if ("release" in taken) taken.release();
  });

  it("makes a second `npm run demo` on one folder stop at once with a clear message", async () => {
    const dataDir = freshDataDir();
    execFileSync("mkdir", ["-p", dataDir]);
    const running = spawn("sleep", ["60"]);
    writeFileSync(path.join(dataDir, "demo.lock"), `${running.pid}\n`);
    try {
      const second = await runScript("scripts/demo.ts", dataDir);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`another \`npm run demo\` (pid ${running.pid}) is already running`);
    } finally {
      running.kill();
    }
  }, 60_000);
});

function postgresUser(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}
