"use client";

import { useActionState, useState } from "react";
import type { EndpointChoice } from "@/lib/api-keys";
import { SCOPE_MEANINGS } from "@/lib/api-keys/scopes";
import { runAction } from "@/app/(dashboard)/actions";
import { IDLE } from "@/app/_lib/action-state";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";

const createApiKeyAction = runAction.bind(null, "api_key.create");

const input = "mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950";

export function CreateApiKeyForm({ endpoints }: { endpoints: EndpointChoice[] }) {
  const [state, action, pending] = useActionState(createApiKeyAction, IDLE);
  const [binding, setBinding] = useState<"account" | "trusted">("account");
  // An endpoint key reserves on its endpoints; an accounts key reads or moves accounts and has none.
  const [use, setUse] = useState<"reserve" | "accounts">("reserve");
  // A created key resets the form's inputs to their defaults: the choices follow, else the radios
  // would read "one billing account" while the fields of a trusted accounts key stay shown.
  const [answered, setAnswered] = useState(state);
  if (state !== answered) {
    setAnswered(state);
    if (state.status === "ok") {
      setBinding("account");
      setUse("reserve");
    }
  }
  return (
    <form method="post" action={action} className="max-w-2xl space-y-4 rounded-lg border border-zinc-200 p-4 dark:border-zinc-800">
      <h2 className="text-lg font-semibold">Create an API key</h2>
      <div>
        <label htmlFor="key-name" className="block text-sm font-medium">
          Name
        </label>
        <input id="key-name" name="name" type="text" required maxLength={100} placeholder="newsletter service (production)" className={input} />
      </div>
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium">Spends for</legend>
        <label className="flex items-center gap-2 text-sm">
          <input type="radio" name="binding" value="account" checked={binding === "account"} onChange={() => setBinding("account")} />
          One billing account: every call is charged to it, whichever of its keys is used
        </label>
        {binding === "account" ? (
          <div className="pl-6">
            <label htmlFor="key-account" className="block text-sm font-medium">
              Billing account
            </label>
            <input id="key-account" name="account" type="text" required maxLength={200} placeholder="acct_123" className={input} />
          </div>
        ) : null}
        <label className="flex items-center gap-2 text-sm">
          <input type="radio" name="binding" value="trusted" checked={binding === "trusted"} onChange={() => setBinding("trusted")} />
          Trusted service: names the caller (billing account) on each request
        </label>
      </fieldset>
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium">What it may do</legend>
        <label className="flex items-center gap-2 text-sm">
          <input type="radio" name="use" value="reserve" checked={use === "reserve"} onChange={() => setUse("reserve")} />
          Spend on endpoints (scope <span className="font-mono">reserve</span>): {SCOPE_MEANINGS.reserve}
        </label>
        <label className="flex items-center gap-2 text-sm">
          <input type="radio" name="use" value="accounts" checked={use === "accounts"} onChange={() => setUse("accounts")} />
          Accounts (a billing service): no endpoint; a key bound to endpoints cannot read or move accounts
        </label>
        {use === "reserve" ? (
          <input type="hidden" name="scopes" value="reserve" />
        ) : (
          <div className="space-y-1 pl-6">
            <label className="flex items-center gap-2 text-sm">
              <input type="checkbox" name="scopes" value="accounts:read" defaultChecked />
              <span className="font-mono">accounts:read</span>
              <span className="text-zinc-500">{SCOPE_MEANINGS["accounts:read"]}</span>
            </label>
            <label className="flex items-center gap-2 text-sm">
              <input type="checkbox" name="scopes" value="accounts:write" />
              <span className="font-mono">accounts:write</span>
              <span className="text-zinc-500">{SCOPE_MEANINGS["accounts:write"]} (trusted service only)</span>
            </label>
          </div>
        )}
      </fieldset>
      {use === "reserve" ? (
        <fieldset>
          <legend className="text-sm font-medium">Endpoints it may use</legend>
          {endpoints.length === 0 ? (
            <p className="mt-1 text-sm text-zinc-500">There are no endpoints yet.</p>
          ) : (
            <div className="mt-1 grid gap-1 sm:grid-cols-2">
              {endpoints.map((e) => (
                <label key={e.key} className="flex items-center gap-2 text-sm">
                  <input type="checkbox" name="endpointKeys" value={e.key} />
                  <span className="font-mono">{e.key}</span>
                  <span className="text-zinc-500">{e.name}</span>
                </label>
              ))}
            </div>
          )}
        </fieldset>
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Creating…">
        Create API key
      </SubmitButton>
      <ActionMessage state={state} testId="api-key-action" secretTestId="api-key-secret" />
    </form>
  );
}
