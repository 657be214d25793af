import { DataTable, type TableSpec } from "@/components/data-table";
import { cardClass } from "@/components/ui";
import { formatAgo, formatCount } from "@/lib/format";
import { describeFailureMode, describeThrottle, type ThrottleActivity, type ThrottleCaller } from "@/lib/throttle";

function throttleTable(perMinute: number, minutes: number, now: Date): TableSpec<ThrottleCaller> {
  return {
    testId: "throttle-table",
    rowKey: (c) => c.caller,
    empty: <p className="text-zinc-600 dark:text-zinc-400">No caller has reached the throttle in the last {minutes} minutes.</p>,
    columns: [
      { header: "Caller", cellClassName: "font-mono text-xs", cell: (c) => c.caller },
      { header: "Attempts", cellClassName: "tabular-nums", cell: (c) => formatCount(c.attempts) },
      { header: "Throttled", cellClassName: "tabular-nums", cell: (c) => formatCount(c.refused) },
      {
        header: "Rate now (≈ a minute)",
        cellClassName: (c) => (c.estimatePerMinute > perMinute ? "tabular-nums font-semibold text-amber-800 dark:text-amber-300" : "tabular-nums"),
        cell: (c) => `${formatCount(c.estimatePerMinute)}${c.estimatePerMinute > perMinute ? " (over)" : ""}`,
      },
      { header: "Last seen", cellClassName: "whitespace-nowrap", cell: (c) => formatAgo(c.lastSeen, now) },
    ],
  };
}

/**
 * The soft per-caller throttle, deliberately apart from the ceilings: it protects the service from
 * floods, counts every attempt, and is approximate; it bounds no spend.
 */
export function ThrottlePanel({ activity, now = new Date() }: { activity: ThrottleActivity; now?: Date }) {
  const { perMinute, totals, callers, minutes } = activity;
  return (
    <div className={`${cardClass} space-y-3 border-dashed text-sm`} data-testid="throttle-panel">
      <p className="font-medium" data-testid="throttle-sentence">
        {describeThrottle(perMinute)}
      </p>
      {perMinute === null ? null : (
        <>
          <p className="text-zinc-600 dark:text-zinc-400">
            Approximate by design: the rate is this minute&apos;s attempts plus last minute&apos;s, weighted by how much of it is still inside the last 60
            seconds, so a caller may get a few more or fewer than {formatCount(perMinute)} in any 60 seconds. Refused attempts still count.{" "}
            {describeFailureMode(activity.failOpen)}
          </p>
          <p>
            Last {minutes} minutes: {formatCount(totals.attempts)} {totals.attempts === 1 ? "attempt" : "attempts"} from {formatCount(totals.callers)}{" "}
            {totals.callers === 1 ? "caller" : "callers"}, {formatCount(totals.refused)} turned away by the throttle.
          </p>
          <DataTable spec={throttleTable(perMinute, minutes, now)} caption={`Busiest callers at the throttle, last ${minutes} minutes`} rows={callers} />
        </>
      )}
    </div>
  );
}
