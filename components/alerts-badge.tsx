import Link from "next/link";
import type { AlertBadge } from "@/lib/alerts";

/** The count of unacknowledged alerts in the navigation, and a warning when no worker is beating. */
export function AlertsBadge({ badge }: { badge: AlertBadge | null }) {
  if (badge === null) return null;
  return (
    <Link href="/alerts?state=open" className="inline-flex items-center gap-2 text-sm" data-testid="alerts-badge">
      {badge.unacknowledged > 0 ? (
        <span
          className="rounded-full bg-red-600 px-2 py-0.5 text-xs font-semibold text-white"
          aria-label={`${badge.unacknowledged} unacknowledged alerts`}
          data-testid="alerts-badge-count"
        >
          {badge.unacknowledged > 99 ? "99+" : badge.unacknowledged}
        </span>
      ) : null}
      {badge.workerSilent || badge.workerNeverRan ? (
        <span className="rounded-full bg-amber-100 px-2 py-0.5 text-xs font-medium text-amber-900 dark:bg-amber-950 dark:text-amber-200">
          {badge.workerNeverRan ? "no worker" : "worker silent"}
        </span>
      ) : null}
    </Link>
  );
}
