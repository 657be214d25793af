import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { prepareDatabase, stopEmbeddedIfUnused } from "@/db/client";
import { tryPidLock } from "@/db/embedded/pid-lock";
import { env } from "@/lib/env";

// npm run demo: the database (the embedded server without DATABASE_URL, started, migrated and
// seeded), a production build, then the dashboard on port 3000 and the worker as two processes.
// Ctrl-C stops both, then the embedded server this run started unless another client still uses it.

const PORT = 3000;

function spawnChild(name: string, command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: "inherit" });
  child.on("error", (error) => console.error(`demo: ${name} could not start: ${error.message}`));
  return child;
}

function exited(child: ChildProcess): Promise<number> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
}

async function main(): Promise<number> {
  const e = env();
  mkdirSync(e.DATA_DIR, { recursive: true });
  // Two demos on one folder would build into one .next and race for port 3000: the second stops here.
  const lock = tryPidLock(path.join(e.DATA_DIR, "demo.lock"));
  if ("heldBy" in lock) {
    console.error(`demo: another \`npm run demo\` (pid ${lock.heldBy}) is already running on ${path.resolve(e.DATA_DIR)}. Stop it first (Ctrl-C in its terminal).`);
    return 1;
  }
  try {
    const { embedded } = await prepareDatabase();
    if (embedded) console.log(`demo: embedded database ready (${embedded.startedHere ? "started now" : "already running"}); psql "$(npm run -s db:url)" connects to it`);
    const build = spawnChild("next build", "npx", ["next", "build"]);
    const built = await exited(build);
    if (built !== 0) {
      if (embedded?.startedHere) await stopEmbeddedIfUnused(embedded, e.DATA_DIR);
      return built;
    }
    const children = [spawnChild("dashboard", "npx", ["next", "start", "-p", String(PORT)]), spawnChild("worker", "npx", ["tsx", "scripts/worker.ts"])];
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    // One child ending on its own (a crash, port 3000 taken) ends the demo: half a demo misleads.
    const first = await Promise.race(children.map(exited));
    if (!stopping) console.error(`demo: a process exited (code ${first}); stopping the others`);
    stop();
    await Promise.all(children.map(exited));
    if (embedded?.startedHere) await stopEmbeddedIfUnused(embedded, e.DATA_DIR);
    return first;
  } finally {
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
