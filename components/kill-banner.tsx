import Link from "next/link";
import type { KillState } from "@/lib/ceilings";
import { formatAgo, formatUtc } from "@/lib/format";

/**
 * Shown above every dashboard page while anything is killed: what, since when, by whom, and the
 * latest refusal by the kill switch as proof that it binds. Loaded by the layout's slot.
 */
export function KillBanner({ state, now }: { state: KillState; now: Date }) {
  if (state.killed.length === 0) return null;
  const last = state.lastKillRefusal;
  return (
    <section
      aria-labelledby="kill-banner-title"
      data-testid="kill-banner"
      className="border-b border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      <div className="mx-auto max-w-7xl px-4 py-3 text-sm">
        <h2 id="kill-banner-title" className="font-semibold">
          Kill switch on: {state.killed.length === 1 ? "1 endpoint refuses" : `${state.killed.length} endpoints refuse`} every call
        </h2>
        <ul className="mt-1 space-y-0.5">
          {state.killed.map((k) => (
            <li key={k.key}>
              <Link href={`/endpoints/${encodeURIComponent(k.key)}`} className="font-mono font-medium underline underline-offset-2">
                {k.key}
              </Link>{" "}
              killed{" "}
              {k.killedAt ? (
                <time dateTime={k.killedAt.toISOString()} title={formatUtc(k.killedAt)}>
                  {formatAgo(k.killedAt, now)}
                </time>
              ) : (
                "(time unknown)"
              )}{" "}
              by {k.killedBy ?? "an unknown actor"}
              {k.ceilings > 1 ? ` (${k.ceilings} ceilings at 0)` : ""}
            </li>
          ))}
        </ul>
        <p className="mt-1" data-testid="kill-banner-proof">
          {last ? (
            <>
              Last refusal by the kill switch: <span className="font-mono">{last.endpointKey}</span>
              {last.caller ? ` for ${last.caller}` : ""},{" "}
              <time dateTime={last.lastAt.toISOString()} title={formatUtc(last.lastAt)}>
                {formatAgo(last.lastAt, now)}
              </time>
              {last.count > 1 ? ` (${last.count} folded together)` : ""}.
            </>
          ) : (
            "No call has been refused by the kill switch yet."
          )}
        </p>
      </div>
    </section>
  );
}
