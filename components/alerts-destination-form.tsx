"use client";

import { useActionState } from "react";
import type { AlertFormAction, AlertFormState } from "./alerts-action-form";
import { useHydrated } from "./use-hydrated";

const idle: AlertFormState = { status: "idle" };
const input = "mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950";

/** Adds a Slack or signed webhook destination. */
export function AlertsDestinationForm({ action }: { action: AlertFormAction }) {
  const [state, formAction, pending] = useActionState(action, idle);
  const hydrated = useHydrated();
  return (
    <form action={formAction} method="post" className="max-w-2xl space-y-4 rounded-lg border border-zinc-200 p-4 dark:border-zinc-800">
      <h2 className="text-lg font-semibold">Add a destination</h2>
      <div className="grid gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor="dest-name" className="block text-sm font-medium">Name</label>
          <input id="dest-name" name="name" required maxLength={80} className={input} placeholder="On-call channel" />
        </div>
        <div>
          <label htmlFor="dest-kind" className="block text-sm font-medium">Kind</label>
          <select id="dest-kind" name="kind" defaultValue="slack" className={input}>
            <option value="slack">Slack (incoming webhook)</option>
            <option value="webhook">Generic webhook (signed JSON)</option>
          </select>
        </div>
        <div className="sm:col-span-2">
          <label htmlFor="dest-target" className="block text-sm font-medium">URL</label>
          <input id="dest-target" name="target" type="url" required maxLength={2000} className={input} placeholder="https://hooks.slack.com/services/…" />
        </div>
        <div className="sm:col-span-2">
          <label htmlFor="dest-secret" className="block text-sm font-medium">Signing secret (generic webhooks; blank: generate one)</label>
          <input id="dest-secret" name="signingSecret" type="text" autoComplete="off" minLength={16} maxLength={200} className={input} />
        </div>
      </div>
      <button
        type="submit"
        disabled={!hydrated || pending}
        className="rounded-md bg-zinc-900 px-3 py-2 text-sm font-medium text-white hover:bg-zinc-700 disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900"
      >
        {pending ? "Adding…" : "Add destination"}
      </button>
      {state.status === "error" ? (
        <p role="alert" data-testid="destination-error" className="text-sm text-red-700 dark:text-red-400">{state.error}</p>
      ) : state.status === "ok" ? (
        <p role="status" className="text-sm text-emerald-800 dark:text-emerald-300">{state.message}</p>
      ) : null}
    </form>
  );
}
