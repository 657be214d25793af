import { closeDb, getDb } from "@/db/client";
import { prepareDatabaseWithDemo } from "@/lib/demo";
import { env } from "@/lib/env";
import { metrics, startMetricsServer, type MetricsServer } from "@/lib/metrics";
import { runWorker } from "@/lib/worker/loop";
import { workerSettings } from "@/lib/worker/settings";

// `npm run worker`: the expiry sweeper, the reconcile job, the alert rules, the daily digest,
// alert delivery, due schedules and the ends of temporary raises, in a loop with a heartbeat. Safe to run as several copies on one database. On
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
  await prepareDatabaseWithDemo();
  const db = await getDb();
  console.log(
    `worker ${settings.name}: running every ${settings.intervalMs} ms, schedules and raise ends every ${settings.fastIntervalMs} ms (pid ${process.pid})`,
  );
  // The worker's own metrics port (pulled by Prometheus), when WORKER_METRICS_PORT is set.
  const m = metrics("worker");
  const e = env();
  let server: MetricsServer | undefined;
  if (e.WORKER_METRICS_PORT !== undefined) {
    server = await startMetricsServer({ metrics: m, db: async () => db, port: e.WORKER_METRICS_PORT, token: e.METRICS_TOKEN });
    console.log(`worker ${settings.name}: metrics on ${server.url}`);
  }
  try {
    await runWorker(db, settings, controller.signal);
  } finally {
    await server?.close();
    await closeDb();
  }
}

main().catch((error: unknown) => {
  console.error("worker failed", error);
  process.exitCode = 1;
});
