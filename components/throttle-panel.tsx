import { formatAgo, formatCount } from "@/lib/format";
import { cardClass } from "@/components/ui";
import { describeFailureMode, describeThrottle, type ThrottleActivity } from "@/lib/throttle";

/**
 * The soft per-caller throttle, deliberately apart from the ceilings: it protects the service from
 * floods, counts every attempt, and is approximate; it bounds no spend.
 */
export function ThrottlePanel({ activity, now = new Date() }: { activity: ThrottleActivity; now?: Date }) {
  const { perMinute, totals, callers, minutes } = activity;
  return (
    <div className={`${cardClass} space-y-3 border-dashed text-sm`} data-testid="throttle-panel">
      <p className="font-medium" data-testid="throttle-sentence">{describeThrottle(perMinute)}</p>
      {perMinute === null ? null : (
        <>
          <p className="text-zinc-600 dark:text-zinc-400">
            Approximate by design: the rate is this minute&apos;s attempts plus last minute&apos;s, weighted by how much of
            it is still inside the last 60 seconds, so a caller may get a few more or fewer than {formatCount(perMinute)} in
            any 60 seconds. Refused attempts still count. {describeFailureMode(activity.failOpen)}
          </p>
          <p>
            Last {minutes} minutes: {formatCount(totals.attempts)} {totals.attempts === 1 ? "attempt" : "attempts"} from{" "}
            {formatCount(totals.callers)} {totals.callers === 1 ? "caller" : "callers"}, {formatCount(totals.refused)} turned away by the throttle.
          </p>
          {callers.length === 0 ? (
            <p className="text-zinc-600 dark:text-zinc-400">No caller has reached the throttle in the last {minutes} minutes.</p>
          ) : (
            <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800" tabIndex={0} role="region" aria-label="Busiest callers at the throttle">
              <table className="min-w-full text-left text-sm" data-testid="throttle-table">
                <caption className="sr-only">Busiest callers at the throttle, last {minutes} minutes</caption>
                <thead className="bg-zinc-100 text-xs uppercase tracking-wide text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300">
                  <tr>
                    <th scope="col" className="px-3 py-2">Caller</th>
                    <th scope="col" className="px-3 py-2">Attempts</th>
                    <th scope="col" className="px-3 py-2">Throttled</th>
                    <th scope="col" className="px-3 py-2">Rate now (≈ a minute)</th>
                    <th scope="col" className="px-3 py-2">Last seen</th>
                  </tr>
                </thead>
                <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
                  {callers.map((c) => (
                    <tr key={c.caller}>
                      <td className="px-3 py-2 font-mono text-xs">{c.caller}</td>
                      <td className="px-3 py-2 tabular-nums">{formatCount(c.attempts)}</td>
                      <td className="px-3 py-2 tabular-nums">{formatCount(c.refused)}</td>
                      <td className={`px-3 py-2 tabular-nums ${c.estimatePerMinute > perMinute ? "font-semibold text-amber-800 dark:text-amber-300" : ""}`}>
                        {formatCount(c.estimatePerMinute)}
                        {c.estimatePerMinute > perMinute ? " (over)" : ""}
                      </td>
                      <td className="whitespace-nowrap px-3 py-2">{formatAgo(c.lastSeen, now)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </div>
  );
}
