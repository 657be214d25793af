import { runAction } from "@/app/(dashboard)/actions";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { Money } from "@/components/money";
import { cardClass } from "@/components/ui";
import { formatUnits, formatUtc } from "@/lib/format";
import type { ProviderCap, SecondCapVerdict } from "@/lib/reconciliation/types";
import { ProviderCapForm } from "./provider-cap-form";

// The second line (seed article: "Set one. It is the second line"): the limit set at the provider
// itself, and whether it sits above Ceilings' worst case, as a backstop should, or below it.

const removeAction = runAction.bind(null, "provider_cap.remove");

/** The verdict as one sentence staff can act on. */
export function secondCapSentence(v: SecondCapVerdict): string {
  switch (v.state) {
    case "missing":
      return "No second cap is recorded: set a limit at the provider too, so a bug in the ledger or a call that skips Ceilings still stops somewhere, and record where it is set.";
    case "above":
      return `The provider stops at ${v.capText}, above Ceilings' worst case of ${v.worstText}: a backstop, as it should be.`;
    case "below":
      return `The provider stops at ${v.capText}, below Ceilings' worst case of ${v.worstText}: the provider binds first and Ceilings' ceilings would never bind. Raise the provider's limit above the worst case or lower the ceilings.`;
    case "unbounded":
      return `The provider stops at ${v.capText}; no global ceiling bounds that window, so there is no worst case to compare it with.`;
  }
}

const tone: Record<SecondCapVerdict["state"], string> = {
  above: "text-emerald-800 dark:text-emerald-300",
  below: "text-amber-800 dark:text-amber-300",
  unbounded: "text-amber-800 dark:text-amber-300",
  missing: "text-red-800 dark:text-red-300",
};

type Props = { endpointKey: string; unit: string; currency: string; cap: ProviderCap | null; verdict: SecondCapVerdict; isAdmin: boolean };

export function SecondCapCard({ endpointKey, unit, currency, cap, verdict, isAdmin }: Props) {
  return (
    <section aria-labelledby="second-cap-title" id="second-cap" className={`${cardClass} space-y-3`} data-testid="second-cap" data-state={verdict.state}>
      <h2 id="second-cap-title" className="text-lg font-semibold">
        Second cap at the provider
      </h2>
      <p className={`text-sm font-medium ${tone[verdict.state]}`} data-testid="second-cap-verdict">
        {secondCapSentence(verdict)}
      </p>
      {cap ? (
        <dl className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]">
          <dt className="text-zinc-600 dark:text-zinc-400">Limit</dt>
          <dd>
            {cap.measure === "money" ? <Money micros={cap.amount} currency={currency} /> : formatUnits(cap.amount, unit)} per {cap.window}
          </dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Where it is set</dt>
          <dd className="break-words">{cap.setAt}</dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Recorded</dt>
          <dd>
            {formatUtc(cap.recordedAt)} by {cap.recordedBy}
          </dd>
        </dl>
      ) : null}
      {isAdmin ? (
        <div className="space-y-3 border-t border-zinc-200 pt-3 dark:border-zinc-800">
          <ProviderCapForm
            endpointKey={endpointKey}
            unit={unit}
            currency={currency}
            current={cap ? { measure: cap.measure, window: cap.window, amount: cap.amount, setAt: cap.setAt } : null}
          />
          {cap ? (
            <ConfirmActionButton
              action={removeAction}
              label="Remove the record"
              title="Remove the second cap's record?"
              description="Only Ceilings' record goes: the limit at the provider stays as it is. Readiness then says no second cap is recorded."
              confirmLabel="Remove the record"
              fields={{ endpointKey }}
              reason="optional"
              tone="neutral"
              testId="provider-cap-remove"
            />
          ) : null}
        </div>
      ) : (
        <p className="text-xs text-zinc-600 dark:text-zinc-400">Admins record the second cap.</p>
      )}
    </section>
  );
}
