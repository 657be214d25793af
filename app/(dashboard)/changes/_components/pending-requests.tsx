import Link from "next/link";
import type { ChangeRequestView } from "@/lib/changes";
import { raiseEndText, timingText } from "@/components/change-request-facts";
import { cardClass } from "@/components/ui";
import { RequestButton } from "./request-controls";

// Pending requests and unacknowledged break glass where staff already look: the overview and an
// endpoint's page. Each links to the request's page, where it is decided.

export function PendingRequests({ requests, now, title = "Waiting for a second admin" }: { requests: ChangeRequestView[]; now: Date; title?: string }) {
  if (requests.length === 0) return null;
  return (
    <section
      aria-label={title}
      className={`${cardClass} space-y-2 border-amber-300 dark:border-amber-800`}
      data-testid="pending-requests"
      data-count={requests.length}
    >
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 className="text-base font-semibold">
          {title}: {requests.length}
        </h2>
        <Link href="/changes" className="text-sm underline underline-offset-2">
          All change requests
        </Link>
      </div>
      <ul className="space-y-1 text-sm">
        {requests.map((r) => (
          <li key={r.id} className="flex flex-wrap justify-between gap-x-3" data-testid="change-request-row" data-request-id={r.id}>
            <Link href={`/changes/${r.id}`} className="break-words font-medium underline underline-offset-2">
              #{r.id} {r.summary}
            </Link>
            <span className="text-zinc-600 dark:text-zinc-400">
              by {r.requestedBy}, {timingText(r, now)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Every break glass no other admin has acknowledged; Acknowledge for admins other than who broke it. */
export function UnacknowledgedBreakGlass({ requests, viewerId, isAdmin }: { requests: ChangeRequestView[]; viewerId: number; isAdmin: boolean }) {
  if (requests.length === 0) return null;
  return (
    <section aria-label="Break glass to acknowledge" className={`${cardClass} space-y-2 border-red-400 dark:border-red-700`} data-testid="break-glass-list">
      <h2 className="text-base font-semibold text-red-800 dark:text-red-300">Break glass not yet acknowledged: {requests.length}</h2>
      <ul className="space-y-3 text-sm">
        {requests.map((r) => {
          const end = raiseEndText(r);
          return (
            <li key={r.id} className="flex flex-wrap items-start justify-between gap-2" data-testid="break-glass-row" data-request-id={r.id}>
              <div className="min-w-0">
                <Link href={`/changes/${r.id}`} className="break-words font-medium underline underline-offset-2">
                  #{r.id} {r.summary}
                </Link>
                <p className="break-words text-zinc-600 dark:text-zinc-400">
                  by {r.requestedBy}: {r.reason}
                  {end ? ` (${end})` : ""}
                </p>
              </div>
              {isAdmin && r.requestedById !== viewerId ? <RequestButton id={r.id} kind="acknowledge" /> : null}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
