import { closeDb, getDb } from "@/db/client";
import { env } from "@/lib/env";
import { runWorker } from "@/lib/worker/loop";
import { workerSettings } from "@/lib/worker/settings";

// `npm run worker`: the expiry sweeper, the reconcile job, the alert rules, the daily digest and
// alert delivery, in a loop with a heartbeat. Safe to run as several copies on one database. On
// DATABASE_URL, or without it on the embedded server (started if no other process has).

async function main(): Promise<void> {
  const settings = workerSettings(env());
  const controller = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      console.log(`worker ${settings.name}: ${signal}, finishing the current loop`);
      controller.abort();
    });
  }
  const db = await getDb();
  console.log(`worker ${settings.name}: running every ${settings.intervalMs} ms (pid ${process.pid})`);
  try {
    await runWorker(db, settings, controller.signal);
  } finally {
    await closeDb();
  }
}

main().catch((error: unknown) => {
  console.error("worker failed", error);
  process.exitCode = 1;
});
