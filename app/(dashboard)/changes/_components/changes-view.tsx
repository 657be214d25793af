import Link from "next/link";
import type { ChangeRequestView } from "@/lib/changes";
import { ChangeRequestFacts } from "@/components/change-request-facts";
import { cardClass, secondaryButtonClass } from "@/components/ui";

// The change requests page from its prepared data: the page reads (and checks the role), this
// renders. Pending first, all of them, oldest expiring first; then decided ones, newest first,
// one keyset page at a time.

export type ChangesView = { pending: ChangeRequestView[]; decided: ChangeRequestView[]; nextCursor: number | null; cursor: number | null };

export function RequestCard({ request, now }: { request: ChangeRequestView; now: Date }) {
  const attention = request.state === "pending" || (request.breakGlass && request.acknowledgedAt === null);
  return (
    <article
      className={`${cardClass} ${attention ? "border-amber-300 dark:border-amber-800" : ""}`}
      data-testid="change-request-row"
      data-request-id={request.id}
      data-state={request.state}
    >
      <ChangeRequestFacts request={request} now={now} link />
    </article>
  );
}

export function ChangesPageView({ view, now }: { view: ChangesView; now: Date }) {
  return (
    <div className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Change requests</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Lowering spend takes one person; raising it takes two. A raise is asked here and applied when a second admin approves it; a request expires 24 hours
          after it is asked.
        </p>
      </div>
      {view.cursor === null ? (
        <section aria-labelledby="pending-title" className="space-y-3">
          <h2 id="pending-title" className="text-lg font-semibold">
            Pending ({view.pending.length})
          </h2>
          {view.pending.length === 0 ? (
            <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="no-pending-requests">
              Nothing is waiting for a second admin.
            </p>
          ) : (
            <ul className="space-y-3" aria-label="Pending requests">
              {view.pending.map((r) => (
                <li key={r.id}>
                  <RequestCard request={r} now={now} />
                </li>
              ))}
            </ul>
          )}
        </section>
      ) : null}
      <section aria-labelledby="decided-title" className="space-y-3">
        <h2 id="decided-title" className="text-lg font-semibold">
          Decided
        </h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Applied, rejected, stale, expired, cancelled and break glass, newest first.</p>
        {view.decided.length === 0 ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400">{view.cursor ? "No older requests." : "No request has been decided yet."}</p>
        ) : (
          <ul className="space-y-3" aria-label="Decided requests">
            {view.decided.map((r) => (
              <li key={r.id}>
                <RequestCard request={r} now={now} />
              </li>
            ))}
          </ul>
        )}
        <div className="flex gap-2">
          {view.cursor ? (
            <Link href="/changes" className={secondaryButtonClass}>
              Newest
            </Link>
          ) : null}
          {view.nextCursor ? (
            <Link href={`/changes?before=${view.nextCursor}`} className={secondaryButtonClass} data-testid="changes-older">
              Older
            </Link>
          ) : null}
        </div>
      </section>
    </div>
  );
}
