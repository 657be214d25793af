"use client";

import { useRouter } from "next/navigation";
import { useActionState, useEffect, useId, useState } from "react";
import { IDLE, type ActionState } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { FieldError } from "@/app/(dashboard)/endpoints/_components/field-error";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";
import { usageSourceKindLabels, usageSourceKinds, type UsageSourceKind } from "@/lib/reconciliation/types";

// The new-source and edit-source forms: one set of fields, what each kind needs said beside it,
// and every error from the server next to its field.

const createAction = runAction.bind(null, "usage_source.create");
const updateAction = runAction.bind(null, "usage_source.update");

export type SourceFieldsText = {
  name: string;
  kind: UsageSourceKind;
  location: string;
  credentialRef: string;
  account: string;
  timeZone: string;
  currency: string;
  lookbackDays: string;
  thresholdPercent: string;
  thresholdMoney: string;
  unmappedMoney: string;
  pullAt: string;
};

export const emptySource: SourceFieldsText = {
  name: "",
  kind: "openai",
  location: "",
  credentialRef: "",
  account: "",
  timeZone: "UTC",
  currency: "USD",
  lookbackDays: "3",
  thresholdPercent: "2",
  thresholdMoney: "1",
  unmappedMoney: "1",
  pullAt: "06:00",
};

const locationHint: Record<UsageSourceKind, string> = {
  openai: "Blank: https://api.openai.com. Another host (a proxy) only if USAGE_SOURCE_ALLOW_HOSTS names it: the key goes nowhere else.",
  anthropic: "Blank: https://api.anthropic.com. Another host (a proxy) only if USAGE_SOURCE_ALLOW_HOSTS names it: the key goes nowhere else.",
  twilio: "Blank: https://api.twilio.com. Another host (a proxy) only if USAGE_SOURCE_ALLOW_HOSTS names it: the token goes nowhere else.",
  sendgrid: "Blank: https://api.sendgrid.com. Another host (a proxy) only if USAGE_SOURCE_ALLOW_HOSTS names it: the key goes nowhere else.",
  postmark: "Blank: https://api.postmarkapp.com. Another host (a proxy) only if USAGE_SOURCE_ALLOW_HOSTS names it: the token goes nowhere else.",
  ses: "Blank: https://email.<region>.amazonaws.com for the region below. Another host only if USAGE_SOURCE_ALLOW_HOSTS names it.",
  file: "An http(s) URL, or a path inside the server's USAGE_FILE_DIR, the worker reads every day; blank when files are only imported by hand.",
};

const credentialHint: Record<UsageSourceKind, string> = {
  openai:
    "env:CEILINGS_SECRET_OPENAI or env:CEILINGS_SECRET_OPENAI_..., naming the worker's variable holding an organization admin key (sk-admin-...). The key itself is never stored.",
  anthropic:
    "env:CEILINGS_SECRET_ANTHROPIC or env:CEILINGS_SECRET_ANTHROPIC_..., naming the worker's variable holding an Admin API key (sk-ant-admin...). The key itself is never stored.",
  twilio:
    "env:CEILINGS_SECRET_TWILIO or env:CEILINGS_SECRET_TWILIO_..., naming the worker's variable holding the account's auth token. The token itself is never stored.",
  sendgrid:
    "env:CEILINGS_SECRET_SENDGRID or env:CEILINGS_SECRET_SENDGRID_..., naming the worker's variable holding an API key with stats.read. The key itself is never stored.",
  postmark:
    "env:CEILINGS_SECRET_POSTMARK or env:CEILINGS_SECRET_POSTMARK_..., naming the worker's variable holding the server's API token. The token itself is never stored.",
  ses: "env:CEILINGS_SECRET_SES or env:CEILINGS_SECRET_SES_..., naming the worker's variable holding ACCESS_KEY_ID:SECRET_ACCESS_KEY of an IAM user allowed ses:GetSendStatistics. Never stored.",
  file: "A file source takes none: leave blank.",
};

const accountHint: Record<UsageSourceKind, string> = {
  openai: "Optional: a project id (proj_...) when the key sees several projects.",
  anthropic: "Optional: a workspace id (wrkspc_...) when the key sees several workspaces.",
  twilio: "Required: the Account SID, AC followed by 32 hex digits.",
  sendgrid: "Optional: a subuser's name, to count that subuser only. Days are UTC.",
  postmark:
    "Optional: a message stream id (outbound) to count that stream, or tag: and a tag (tag:welcome); blank: every stream. Postmark's days are US Eastern: set the time zone to America/New_York.",
  ses: "Required: the AWS region, such as us-east-1. SES keeps two weeks: at most 12 days pulled each time.",
  file: "A file source takes none: leave blank.",
};

function Field(props: {
  name: keyof SourceFieldsText;
  label: string;
  value: string;
  onChange: (v: string) => void;
  state: ActionState;
  hint?: string;
  mono?: boolean;
  inputMode?: "decimal" | "numeric";
  placeholder?: string;
}) {
  const id = useId();
  return (
    <div>
      <label htmlFor={id} className={labelClass}>
        {props.label}
      </label>
      <input
        id={id}
        name={props.name}
        type="text"
        autoComplete="off"
        inputMode={props.inputMode}
        placeholder={props.placeholder}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
        className={`${inputClass} ${props.mono ? "font-mono" : ""}`}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        data-testid={`source-${props.name}`}
      />
      {props.hint ? (
        <p id={`${id}-hint`} className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
          {props.hint}
        </p>
      ) : null}
      <FieldError state={props.state} name={props.name} />
    </div>
  );
}

/** Both forms: `source` present is an edit (the kind is fixed, the version guards the save). */
export function SourceForm({ initial, source }: { initial: SourceFieldsText; source?: { id: number; version: string } }) {
  const id = useId();
  const router = useRouter();
  const [state, formAction, pending] = useActionState(source ? updateAction : createAction, IDLE);
  const [v, setV] = useState<SourceFieldsText>(initial);
  const set = (patch: Partial<SourceFieldsText>) => setV((old) => ({ ...old, ...patch }));
  useEffect(() => {
    if (state.status === "ok" && state.redirectTo) router.push(state.redirectTo);
  }, [state, router]);
  const api = v.kind !== "file";
  return (
    <form action={formAction} className="space-y-4" data-testid={source ? "edit-source-form" : "new-source-form"}>
      {source ? (
        <>
          <input type="hidden" name="sourceId" value={source.id} />
          <input type="hidden" name="version" value={source.version} />
          <input type="hidden" name="kind" value={v.kind} />
        </>
      ) : null}
      <div className="grid gap-3 sm:grid-cols-2">
        <Field name="name" label="Name" value={v.name} onChange={(name) => set({ name })} state={state} hint="Like OpenAI production; at most 80 characters" />
        {source ? (
          <div>
            <p className={labelClass}>Kind</p>
            <p className="mt-1 py-2 text-sm">{usageSourceKindLabels[v.kind]} (fixed)</p>
          </div>
        ) : (
          <div>
            <label htmlFor={`${id}-kind`} className={labelClass}>
              Kind
            </label>
            <select
              id={`${id}-kind`}
              name="kind"
              value={v.kind}
              onChange={(e) => {
                const kind = usageSourceKinds.find((k) => k === e.target.value) ?? "openai";
                set({ kind, ...(kind === "file" ? { credentialRef: "", account: "" } : {}) });
              }}
              className={inputClass}
              data-testid="source-kind"
            >
              {usageSourceKinds.map((k) => (
                <option key={k} value={k}>
                  {usageSourceKindLabels[k]}
                </option>
              ))}
            </select>
            <FieldError state={state} name="kind" />
          </div>
        )}
        <Field
          name="location"
          label={api ? "API base URL" : "Location"}
          value={v.location}
          onChange={(location) => set({ location })}
          state={state}
          hint={locationHint[v.kind]}
          mono
        />
        <Field
          name="credentialRef"
          label="Credential reference"
          value={v.credentialRef}
          onChange={(credentialRef) => set({ credentialRef })}
          state={state}
          hint={credentialHint[v.kind]}
          mono
          placeholder={api ? `env:CEILINGS_SECRET_${v.kind.toUpperCase()}` : ""}
        />
        <Field
          name="account"
          label={v.kind === "twilio" ? "Account SID" : v.kind === "ses" ? "Region" : "Account"}
          value={v.account}
          onChange={(account) => set({ account })}
          state={state}
          hint={accountHint[v.kind]}
          mono
        />
        <Field
          name="timeZone"
          label="Time zone of the provider's days"
          value={v.timeZone}
          onChange={(timeZone) => set({ timeZone })}
          state={state}
          hint="An IANA name: UTC for the OpenAI, Anthropic, Twilio and SendGrid APIs; America/New_York for Postmark; any zone for SES. Ceilings counts its charges over the provider's day in this zone."
        />
        <Field
          name="currency"
          label="Currency"
          value={v.currency}
          onChange={(currency) => set({ currency: currency.toUpperCase() })}
          state={state}
          hint="The currency of the provider's costs; a rule maps only to endpoints and budgets in it"
        />
        <Field
          name="lookbackDays"
          label="Days pulled each time"
          value={v.lookbackDays}
          onChange={(lookbackDays) => set({ lookbackDays })}
          state={state}
          inputMode="numeric"
          hint="1 to 35 complete days before today: providers revise recent days, so each pull replaces them"
        />
        <Field
          name="thresholdPercent"
          label="Alert threshold (%)"
          value={v.thresholdPercent}
          onChange={(thresholdPercent) => set({ thresholdPercent })}
          state={state}
          inputMode="decimal"
          hint="A day drifts when billed and charged differ by at least this share of the larger…"
        />
        <Field
          name="thresholdMoney"
          label={`…and by at least (${v.currency || "USD"})`}
          value={v.thresholdMoney}
          onChange={(thresholdMoney) => set({ thresholdMoney })}
          state={state}
          inputMode="decimal"
          hint="Both must be passed: a 50 % drift on 2 cents is not worth an alert"
        />
        <Field
          name="unmappedMoney"
          label={`Alert on unmapped items from (${v.currency || "USD"} a day)`}
          value={v.unmappedMoney}
          onChange={(unmappedMoney) => set({ unmappedMoney })}
          state={state}
          inputMode="decimal"
          hint="Money billed on items no rule maps (a new model, a leaked key) is alerted once a day from this much; 0 alerts on any"
        />
        <Field
          name="pullAt"
          label="Pull each day at"
          value={v.pullAt}
          onChange={(pullAt) => set({ pullAt })}
          state={state}
          placeholder="06:00"
          hint="HH:MM in the source's time zone, after the provider publishes the day before (the day is pulled again a day later for late data)"
        />
      </div>
      <SubmitButton pending={pending} pendingLabel="Saving…" testId={source ? "save-source" : "create-source"}>
        {source ? "Save settings" : "Connect source"}
      </SubmitButton>
      <ActionMessage state={state} testId={source ? "save-source" : "create-source"} />
    </form>
  );
}
