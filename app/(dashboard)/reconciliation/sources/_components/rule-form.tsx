"use client";

import { useActionState, useId, useState } from "react";
import { IDLE } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { FieldError } from "@/app/(dashboard)/endpoints/_components/field-error";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";
import type { RuleTargetOptions } from "@/lib/reconciliation/sources";
import type { UsageField, UsageSourceKind } from "@/lib/reconciliation/types";

// Adds a rule: a provider item (or a prefix ending in *) to one endpoint or one budget. "Map it"
// beside an unmapped item opens this form with the item typed in.

const addRuleAction = runAction.bind(null, "usage_rule.add");

/** The usage fields each API reports an item's tokens in (providers/openai.ts, anthropic.ts). */
const fieldsOf: Partial<Record<UsageSourceKind, readonly UsageField[]>> = {
  openai: ["input", "cached-input", "cache-write", "output"],
  anthropic: ["input", "cache-read", "cache-write", "cache-write-1h", "output"],
};

export function RuleForm({
  sourceId,
  kind,
  currency,
  targets,
  match,
}: {
  sourceId: number;
  kind: UsageSourceKind;
  currency: string;
  targets: RuleTargetOptions;
  match: string;
}) {
  const id = useId();
  const [state, formAction, pending] = useActionState(addRuleAction, IDLE);
  const [target, setTarget] = useState("");
  const endpoint = target.startsWith("endpoint:") ? targets.endpoints.find((e) => `endpoint:${e.key}` === target) : undefined;
  const sameCurrency = <T extends { currency: string }>(list: T[]) => list.filter((x) => x.currency === currency);
  return (
    <form action={formAction} className="space-y-3" data-testid="add-rule-form" id="add-rule">
      <input type="hidden" name="sourceId" value={sourceId} />
      <div className="grid gap-3 sm:grid-cols-3">
        <div>
          <label htmlFor={`${id}-match`} className={labelClass}>
            Provider item
          </label>
          <input
            id={`${id}-match`}
            name="match"
            type="text"
            maxLength={200}
            autoComplete="off"
            defaultValue={match}
            key={match}
            className={`${inputClass} font-mono`}
            data-testid="rule-match"
          />
          <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
            Exact, or a prefix ending in * (gpt-4o*). Exact beats prefix; the longest prefix wins.
          </p>
          {kind === "twilio" ? (
            <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400" data-testid="rule-rollup-hint">
              Roll-ups (sms, calls, totalprice, and any category others extend, such as sms-outbound beside sms-outbound-longcode) are never mapped: their
              leaves are, so nothing is billed twice.
            </p>
          ) : null}
          <FieldError state={state} name="match" />
        </div>
        <div>
          <label htmlFor={`${id}-target`} className={labelClass}>
            Counts for
          </label>
          <select id={`${id}-target`} name="target" value={target} onChange={(e) => setTarget(e.target.value)} className={inputClass} data-testid="rule-target">
            <option value="">Choose an endpoint or a budget</option>
            <optgroup label="Endpoints">
              {sameCurrency(targets.endpoints).map((e) => (
                <option key={e.key} value={`endpoint:${e.key}`}>
                  {e.key} ({e.name})
                </option>
              ))}
            </optgroup>
            <optgroup label="Budgets (rows must carry cost)">
              {sameCurrency(targets.budgets).map((b) => (
                <option key={b.key} value={`budget:${b.key}`}>
                  {b.key} ({b.name})
                </option>
              ))}
            </optgroup>
          </select>
          <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
            Only those in {currency}. One source per endpoint or budget, else its usage is counted twice.
          </p>
          {(["target", "endpointKey", "budgetKey"] as const).map((name) => (
            <FieldError key={name} state={state} name={name} />
          ))}
        </div>
        <div>
          <label htmlFor={`${id}-part`} className={labelClass}>
            Priced at part
          </label>
          <select id={`${id}-part`} name="part" className={inputClass} disabled={!endpoint} key={target} defaultValue="" data-testid="rule-part">
            <option value="">{endpoint ? `First part (${endpoint.parts[0] ?? "units"})` : "Not for a budget"}</option>
            {(endpoint?.parts ?? []).map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
          <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">Prices a row the provider reports as a count without money.</p>
          <FieldError state={state} name="part" />
        </div>
      </div>
      {endpoint && fieldsOf[kind] ? (
        <fieldset className="space-y-2" data-testid="rule-field-parts">
          <legend className={labelClass}>Each usage field priced at</legend>
          <p className="text-xs text-zinc-600 dark:text-zinc-400">
            The provider reports an item&apos;s tokens per field, each at its own price when it reports no money. A field goes to the part of its own name, else
            the part above: choose another here (cache reads at a cached part, say).
          </p>
          <div className="grid gap-3 sm:grid-cols-3">
            {(fieldsOf[kind] ?? []).map((field) => (
              <div key={`${target}:${field}`}>
                <label htmlFor={`${id}-part-${field}`} className="block text-xs font-medium">
                  {field}
                </label>
                <select id={`${id}-part-${field}`} name={`part_${field}`} className={inputClass} defaultValue="" data-testid={`rule-part-${field}`}>
                  <option value="">{endpoint.parts.includes(field) ? `${field} (its own name)` : "the part above"}</option>
                  {endpoint.parts.map((p) => (
                    <option key={p} value={p}>
                      {p}
                    </option>
                  ))}
                </select>
                <FieldError state={state} name={`part_${field}`} />
              </div>
            ))}
          </div>
        </fieldset>
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Adding…" testId="add-rule">
        Add rule
      </SubmitButton>
      <ActionMessage state={state} testId="add-rule" />
    </form>
  );
}
