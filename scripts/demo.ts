import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { stopEmbeddedIfUnused } from "@/db/client";
import type { EmbeddedServer } from "@/db/embedded/server";
import { tryPidLock } from "@/db/embedded/pid-lock";
import { prepareDatabaseWithDemo } from "@/lib/demo";
import { env } from "@/lib/env";
import { demoChildEnv } from "./demo-env";

// npm run demo: the database (the embedded server without DATABASE_URL, started, migrated and
// seeded), a production build, then the dashboard on port 3000, the enforcement API server on
// API_PORT (3001, what services call: npm run api) and the worker as three processes. Ctrl-C stops
// them all, then the embedded server this run started unless another client still uses it.

const PORT = 3000;
const NEXT = path.join("node_modules", "next", "dist", "bin", "next");

/**
 * A child in a process group of its own, run by node directly (not through npx, which does not pass
 * SIGTERM on to what it started), so stopping the group stops everything it runs. Its environment
 * has Next's telemetry off (demo-env.ts): a new user's first demo prints no telemetry notice.
 */
function spawnChild(name: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, args, { stdio: "inherit", detached: true, env: demoChildEnv(process.env) });
  child.on("error", (error) => console.error(`demo: ${name} could not start: ${error.message}`));
  return child;
}

function stopGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    // The group is already gone.
  }
}

function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? 0);
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? (signal ? 0 : 1))));
}

async function main(): Promise<number> {
  const e = env();
  mkdirSync(e.DATA_DIR, { recursive: true });
  // Two demos on one folder would build into one .next and race for port 3000: the second stops here.
  const lock = tryPidLock(path.join(e.DATA_DIR, "demo.lock"));
  if ("heldBy" in lock) {
    console.error(
      `demo: another \`npm run demo\` (pid ${lock.heldBy}) is already running on ${path.resolve(e.DATA_DIR)}. Stop it first (Ctrl-C in its terminal).`,
    );
    return 1;
  }
  // Signals are handled from the start: Ctrl-C during the build stops the build too.
  const running: ChildProcess[] = [];
  let stopping = false;
  const stop = () => {
    stopping = true;
    for (const child of running) stopGroup(child);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const start = (name: string, args: string[]) => {
    const child = spawnChild(name, args);
    running.push(child);
    return child;
  };
  let embedded: EmbeddedServer | undefined;
  try {
    embedded = (await prepareDatabaseWithDemo()).embedded;
    if (embedded)
      console.log(`demo: embedded database ready (${embedded.startedHere ? "started now" : "already running"}); psql "$(npm run -s db:url)" connects to it`);
    const built = await exited(start("next build", [NEXT, "build"]));
    if (built !== 0 || stopping) return built;
    const children = [
      start("dashboard", [NEXT, "start", "-p", String(PORT)]),
      start("api", ["--import", "tsx", "scripts/api.ts"]),
      start("worker", ["--import", "tsx", "scripts/worker.ts"]),
    ];
    // One child ending on its own (a crash, port 3000 taken) ends the demo: half a demo misleads.
    const first = await Promise.race(children.map(exited));
    if (!stopping) console.error(`demo: a process exited (code ${first}); stopping the others`);
    stop();
    await Promise.all(children.map(exited));
    return first;
  } finally {
    if (embedded?.startedHere) await stopEmbeddedIfUnused(embedded, e.DATA_DIR);
    lock.release();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
