import Link from "next/link";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { formatAgo, formatCount, formatUtc } from "@/lib/format";
import { StateBadge } from "@/components/state-badge";
import { cardClass } from "@/components/ui";
import { UsageBar } from "@/components/usage-bar";
import { unitLabel, type CeilingView, type EndpointDetail } from "@/lib/ceilings";
import type { ScopeUsage } from "@/lib/ceilings/usage";
import { runAction } from "@/app/(dashboard)/actions";
import { AdjustForm } from "./adjust-form";
import { BoundsForm } from "./bounds-form";
import { OverrideForm } from "./override-form";
import { RaiseCountdown } from "./raise-countdown";

const removeOverrideAction = runAction.bind(null, "ceiling.override_remove");

type CeilingCardProps = {
  ceiling: CeilingView;
  unit: string;
  isAdmin: boolean;
  /** Operators and admins: the value form, where an operator may only ask for a raise. */
  canAsk: boolean;
  overrides: EndpointDetail["overrides"];
  planValues: EndpointDetail["planValues"];
  topCallers: ScopeUsage[];
  /** A temporary raise in force on this ceiling: when it ends and what comes back. */
  raiseEnd?: { endsAt: Date; revertTo: number; inForce: boolean } | null;
};

export function CeilingCard({ ceiling: c, unit, isAdmin, canAsk, overrides, planValues, topCallers, raiseEnd }: CeilingCardProps) {
  const what = c.metric === "calls" ? "calls" : unitLabel(unit, 2);
  return (
    <article
      aria-labelledby={`ceiling-${c.id}`}
      className={`${cardClass} space-y-4`}
      data-ceiling-window={c.window}
      data-ceiling-scope={c.scope}
      data-ceiling-metric={c.metric}
    >
      <header className="flex flex-wrap items-start justify-between gap-2">
        <h3 id={`ceiling-${c.id}`} className="text-base font-semibold" data-testid="guarantee">
          {c.guarantee}
        </h3>
        <StateBadge state={c.state} />
      </header>
      <dl className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]">
        <dt className="text-zinc-600 dark:text-zinc-400">Value</dt>
        <dd data-testid="ceiling-value">{formatCount(c.value)}</dd>
        {raiseEnd ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Temporary raise</dt>
            <dd>
              <RaiseCountdown endsAt={raiseEnd.endsAt.toISOString()} endsAtText={formatUtc(raiseEnd.endsAt)} />
              {raiseEnd.inForce
                ? `, then back to ${formatCount(raiseEnd.revertTo)} (or the value in force, if lower)`
                : `; a change request approved since decided the value, so nothing will be put back (it was to be ${formatCount(raiseEnd.revertTo)})`}
            </dd>
          </>
        ) : null}
        <dt className="text-zinc-600 dark:text-zinc-400">Bounds</dt>
        <dd data-testid="ceiling-bounds">
          may be set from {formatCount(c.minValue)} to {formatCount(c.maxValue)} {what}; 0 is always allowed (the kill switch)
        </dd>
        <dt className="text-zinc-600 dark:text-zinc-400">Default</dt>
        <dd>{formatCount(c.defaultValue)}</dd>
        {c.value === 0 ? (
          <>
            <dt className="text-zinc-600 dark:text-zinc-400">Killed</dt>
            <dd>
              {c.killedAt ? formatAgo(c.killedAt) : "at an unknown time"} by {c.killedBy ?? "unknown"}; restore puts back{" "}
              {c.valueBeforeKill === null ? "the default" : formatCount(c.valueBeforeKill)}
            </dd>
          </>
        ) : null}
      </dl>
      {c.scope === "destination" ? (
        <p className="text-sm">{formatCount(c.scopes)} in cooldown now.</p>
      ) : c.value > 0 ? (
        <UsageBar used={c.used} held={c.held} value={c.value} label={c.scope === "caller" ? "Busiest account" : "This window"} />
      ) : null}
      {c.scope === "caller" && topCallers.length > 0 ? (
        <div className="text-sm">
          <p className="font-medium">Busiest accounts in this window</p>
          <ul className="mt-1 space-y-0.5">
            {topCallers.map((t) => (
              <li key={t.scopeKey} className="flex items-center justify-between gap-4 tabular-nums">
                {/* 24 px tall: a finger's target on a phone (WCAG 2.2 target size). */}
                <Link href={`/accounts/${encodeURIComponent(t.scopeKey)}`} className="inline-flex min-h-6 items-center font-mono underline">
                  {t.scopeKey}
                </Link>
                <span>{formatCount(t.settled + t.held)}</span>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {c.scope === "caller" ? (
        <div className="space-y-2 text-sm" data-testid="plan-values">
          <h4 className="font-medium">Plans</h4>
          <p className="text-zinc-600 dark:text-zinc-400">
            An account gets its override, else its plan&apos;s value, else the ceiling&apos;s ({formatCount(c.value)}).
            {c.value === 0 ? " Killed: every account gets 0, whatever its plan or override." : null}
          </p>
          {planValues.length === 0 ? (
            <p className="text-zinc-600 dark:text-zinc-400">No plan sets a value here.</p>
          ) : (
            <ul className="space-y-0.5">
              {planValues.map((p) => (
                <li key={p.planKey} className="flex justify-between gap-4 tabular-nums">
                  {/* A 24 px target: the rows of this list sit 2 px apart (axe target-size). */}
                  <Link href={`/plans/${encodeURIComponent(p.planKey)}`} className="inline-flex min-h-6 items-center underline">
                    {p.planName}
                    {p.isDefault ? " (default)" : ""}
                  </Link>
                  <span>{p.value === 0 ? "0: refused" : formatCount(p.value)}</span>
                </li>
              ))}
            </ul>
          )}
        </div>
      ) : null}
      {c.scope === "caller" ? (
        <div className="space-y-2 text-sm">
          <h4 className="font-medium">Per-account overrides</h4>
          {overrides.length === 0 ? (
            <p className="text-zinc-600 dark:text-zinc-400">None: every account gets its plan&apos;s value or {formatCount(c.value)}.</p>
          ) : (
            <ul className="space-y-2" data-testid="override-list">
              {overrides.map((o) => (
                <li key={o.caller} className="flex flex-wrap items-center justify-between gap-2">
                  <span>
                    <span className="font-mono">{o.caller}</span>: {o.value === 0 ? "blocked" : formatCount(o.value)}{" "}
                    <span className="text-zinc-600 dark:text-zinc-400">({o.reason})</span>
                    {o.expiresAt === null ? null : <span className="text-zinc-600 dark:text-zinc-400"> until {formatUtc(o.expiresAt)}</span>}
                  </span>
                  {isAdmin ? (
                    <ConfirmActionButton
                      action={removeOverrideAction}
                      label={`Remove override for ${o.caller}`}
                      title={`Remove the override for ${o.caller}?`}
                      description={`${o.caller} goes back to the ceiling's own value, ${formatCount(c.value)}.`}
                      confirmLabel="Remove"
                      fields={{ ceilingId: String(c.id), caller: o.caller }}
                      reason="required"
                      tone="neutral"
                      testId={`remove-override-${o.caller}`}
                    />
                  ) : null}
                </li>
              ))}
            </ul>
          )}
          {isAdmin ? <OverrideForm ceilingId={c.id} min={c.minValue} max={c.maxValue} /> : null}
        </div>
      ) : null}
      {canAsk ? (
        <div>
          <h4 className="mb-2 text-sm font-medium">{isAdmin ? "Adjust the value" : "Ask for a higher value"}</h4>
          <AdjustForm
            ceilingId={c.id}
            value={c.value}
            valueBeforeKill={c.valueBeforeKill}
            min={c.minValue}
            max={c.maxValue}
            defaultValue={c.defaultValue}
            version={c.version}
            isAdmin={isAdmin}
            unit={what}
          />
        </div>
      ) : null}
      {isAdmin ? (
        <>
          <details className="text-sm">
            <summary className="cursor-pointer font-medium">Change the bounds</summary>
            <div className="mt-3">
              <BoundsForm ceilingId={c.id} min={c.minValue} max={c.maxValue} version={c.version} />
            </div>
          </details>
        </>
      ) : null}
    </article>
  );
}
