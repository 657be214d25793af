import type { EndpointState } from "@/lib/ceilings";

const styles: Record<EndpointState, string> = {
  killed: "bg-red-100 text-red-800 ring-red-300 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
  // Stopped by a budget: every call refused, like a kill, though the endpoint's own ceilings stand.
  stopped: "bg-red-100 text-red-800 ring-red-300 dark:bg-red-950 dark:text-red-200 dark:ring-red-800",
  near_limit: "bg-amber-100 text-amber-900 ring-amber-300 dark:bg-amber-950 dark:text-amber-200 dark:ring-amber-800",
  live: "bg-emerald-50 text-emerald-800 ring-emerald-200 dark:bg-emerald-950 dark:text-emerald-200 dark:ring-emerald-800",
};

const labels: Record<EndpointState, string> = { killed: "killed", stopped: "stopped", near_limit: "near limit", live: "live" };

/** The state in words as well as colour, so it reads without colour vision. */
export function StateBadge({ state }: { state: EndpointState }) {
  return (
    <span
      data-testid="state-badge"
      className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-semibold uppercase tracking-wide ring-1 ring-inset ${styles[state]}`}
    >
      {labels[state]}
    </span>
  );
}

/** An archived endpoint refuses every reserve (endpoint_archived); its history stays readable. */
export function ArchivedBadge() {
  return (
    <span
      data-testid="state-badge"
      className="inline-flex items-center rounded-full bg-zinc-100 px-2 py-0.5 text-xs font-semibold uppercase tracking-wide text-zinc-700 ring-1 ring-inset ring-zinc-300 dark:bg-zinc-800 dark:text-zinc-200 dark:ring-zinc-600"
    >
      archived
    </span>
  );
}
