// Run as a separate OS process by schedule-workers.int.test.ts: the real worker loop (every 5 s, as
// WORKER_INTERVAL_MS defaults, with its 1 s fast lane) on its own pool until stdin closes.
// Usage: <url> <name>
import { openPostgres } from "@/db/client";
import { runWorker } from "@/lib/worker/loop";
import type { WorkerSettings } from "@/lib/worker/settings";

async function main(): Promise<void> {
  const [url, name] = process.argv.slice(2);
  if (!url || !name) throw new Error("usage: <url> <name>");
  const database = openPostgres(url, { max: 3 });
  const settings: WorkerSettings = {
    name,
    intervalMs: 5000,
    fastIntervalMs: 1000,
    silentAfterSeconds: 600,
    reconcileEveryMs: 3_600_000,
    digestEveryMs: 3_600_000,
    purgeEveryMs: 3_600_000,
    refusalRetentionDays: 90,
    rules: { unavailableBurst: 1000, unavailableWindowMinutes: 5, refusalSpike: 100_000, refusalSpikeWindowMinutes: 5, adjustFactor: 1000 },
    delivery: { retryBaseMs: 1000, retryCapMs: 5000, maxAttempts: 3, timeoutMs: 2000, egress: { allowHosts: ["127.0.0.1"] } },
  };
  const controller = new AbortController();
  process.stdin.on("end", () => controller.abort());
  process.stdin.resume();
  const running = runWorker(database.db, settings, controller.signal);
  process.stdout.write("ready\n");
  await running;
  process.stdout.write(`${JSON.stringify({ name })}\n`);
  await database.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
