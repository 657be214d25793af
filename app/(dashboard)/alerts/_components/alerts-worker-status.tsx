import type { WorkerHealth } from "@/lib/alerts";
import { formatAge, formatDateTime } from "@/lib/format";

/** Every worker's last heartbeat: when, how long ago, and whether it counts as silent. */
export function AlertsWorkerStatus({ workers, silentAfterSeconds }: { workers: WorkerHealth[]; silentAfterSeconds: number }) {
  return (
    <section aria-labelledby="worker-heading" className="rounded-lg border border-zinc-200 p-4 dark:border-zinc-800" data-testid="worker-status">
      <h2 id="worker-heading" className="text-base font-semibold">
        Worker
      </h2>
      <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
        The worker expires reservations, reconciles counters, runs the alert rules and delivers alerts. Silent after {silentAfterSeconds} s without a heartbeat.
      </p>
      {workers.length === 0 ? (
        <p className="mt-2 text-sm font-medium text-red-700 dark:text-red-400" data-testid="worker-state">
          No worker has ever run: alerts are recorded but not delivered, and expired reservations are not swept. Start one with <code>npm run worker</code>.
        </p>
      ) : (
        <ul className="mt-2 space-y-1 text-sm">
          {workers.map((w) => (
            <li key={w.name} className="flex flex-wrap items-baseline gap-x-3" data-testid="worker-row" data-state={w.state}>
              <span className="font-mono">{w.name}</span>
              <span
                data-testid="worker-state"
                className={
                  w.state === "running"
                    ? "rounded-full bg-emerald-100 px-2 py-0.5 text-xs font-medium text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200"
                    : "rounded-full bg-red-100 px-2 py-0.5 text-xs font-medium text-red-900 dark:bg-red-950 dark:text-red-200"
                }
              >
                {w.state}
              </span>
              <span className="text-zinc-600 dark:text-zinc-400">
                last beat {formatDateTime(w.beatAt, { seconds: true })} UTC ({formatAge(w.ageSeconds)} ago)
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
