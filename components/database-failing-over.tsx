import { AutoRefresh } from "./auto-refresh";
import { cardClass } from "./ui";

/**
 * Shown instead of a dashboard page while no database node answers: on a Patroni cluster that is
 * a failover, which ends by itself in seconds. Reservations are refused as unavailable meanwhile.
 */
export function DatabaseFailingOver({ message }: { message: string }) {
  return (
    <main className="mx-auto max-w-3xl px-4 py-10">
      <div className={cardClass} role="alert" data-testid="database-failing-over">
        <h1 className="text-xl font-semibold tracking-tight">The database is failing over</h1>
        <p className="mt-2 text-sm text-zinc-700 dark:text-zinc-300">
          No database node accepts connections right now. On a highly available cluster a new primary takes over within seconds; until then every reservation is
          refused as unavailable, and nothing already granted is lost. This page reloads by itself.
        </p>
        <p className="mt-2 font-mono text-xs text-zinc-500">{message}</p>
        <div className="mt-4">
          <AutoRefresh seconds={3} />
        </div>
      </div>
    </main>
  );
}
