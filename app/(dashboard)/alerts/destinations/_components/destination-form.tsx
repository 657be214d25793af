"use client";

import { useActionState } from "react";
import { IDLE, type FormAction } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";

const input = "mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950";

/** Adds a Slack, signed webhook or e-mail (SMTP) destination. */
export function AlertsDestinationForm({ action }: { action: FormAction }) {
  const [state, formAction, pending] = useActionState(action, IDLE);
  return (
    <form action={formAction} method="post" className="max-w-2xl space-y-4 rounded-lg border border-zinc-200 p-4 dark:border-zinc-800">
      <h2 className="text-lg font-semibold">Add a destination</h2>
      <div className="grid gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor="dest-name" className="block text-sm font-medium">
            Name
          </label>
          <input id="dest-name" name="name" required maxLength={80} className={input} placeholder="On-call channel" />
        </div>
        <div>
          <label htmlFor="dest-kind" className="block text-sm font-medium">
            Kind
          </label>
          <select id="dest-kind" name="kind" defaultValue="slack" className={input}>
            <option value="slack">Slack (incoming webhook)</option>
            <option value="webhook">Generic webhook (signed JSON)</option>
            <option value="email">E-mail (SMTP)</option>
          </select>
        </div>
        <div className="sm:col-span-2">
          <label htmlFor="dest-target" className="block text-sm font-medium">
            URL (webhooks) or recipients, comma-separated (e-mail)
          </label>
          <input
            id="dest-target"
            name="target"
            type="text"
            required
            maxLength={2000}
            className={input}
            placeholder="https://hooks.slack.com/services/… or oncall@example.com"
          />
        </div>
        <div className="sm:col-span-2">
          <label htmlFor="dest-secret" className="block text-sm font-medium">
            Signing secret (generic webhooks; blank: generate one)
          </label>
          <input id="dest-secret" name="signingSecret" type="text" autoComplete="off" minLength={16} maxLength={200} className={input} />
        </div>
      </div>
      <fieldset className="grid gap-4 sm:grid-cols-2">
        <legend className="text-sm font-medium">E-mail only: the SMTP server</legend>
        <div>
          <label htmlFor="dest-smtp-host" className="block text-sm font-medium">
            SMTP host
          </label>
          <input id="dest-smtp-host" name="smtpHost" maxLength={253} className={input} placeholder="smtp.example.com" />
        </div>
        <div>
          <label htmlFor="dest-smtp-port" className="block text-sm font-medium">
            Port
          </label>
          <input id="dest-smtp-port" name="smtpPort" inputMode="numeric" className={input} placeholder="587" />
        </div>
        <div>
          <label htmlFor="dest-smtp-tls" className="block text-sm font-medium">
            TLS
          </label>
          <select id="dest-smtp-tls" name="smtpTls" defaultValue="starttls" className={input}>
            <option value="starttls">STARTTLS, required (587)</option>
            <option value="tls">TLS from the start (465)</option>
            <option value="none">None (a relay on loopback only)</option>
          </select>
        </div>
        <div>
          <label htmlFor="dest-email-from" className="block text-sm font-medium">
            From
          </label>
          <input id="dest-email-from" name="emailFrom" maxLength={320} className={input} placeholder="Ceilings <alerts@example.com>" />
        </div>
        <div>
          <label htmlFor="dest-smtp-user" className="block text-sm font-medium">
            SMTP login (optional)
          </label>
          <input id="dest-smtp-user" name="smtpUsername" autoComplete="off" maxLength={200} className={input} />
        </div>
        <div>
          <label htmlFor="dest-smtp-pass" className="block text-sm font-medium">
            Password: environment variable of the worker
          </label>
          <input id="dest-smtp-pass" name="smtpPasswordRef" autoComplete="off" maxLength={200} className={input} placeholder="env:CEILINGS_SECRET_SMTP" />
        </div>
      </fieldset>
      <SubmitButton pending={pending} pendingLabel="Adding…">
        Add destination
      </SubmitButton>
      <ActionMessage state={state} testId="destination" />
    </form>
  );
}
