import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { hasRole } from "@/lib/auth/roles";
import { listApiKeys, listEndpointChoices } from "@/lib/api-keys";
import { CreateApiKeyForm } from "./_components/create-api-key-form";
import { RevokeApiKeyButton } from "./_components/revoke-api-key-button";
import { formatDateTime } from "@/lib/format";

export const metadata: Metadata = { title: "API keys" };

const cell = "px-3 py-2 align-top";

export default async function ApiKeysPage() {
  const me = await requirePageRole("viewer");
  const admin = hasRole(me.role, "admin");
  const db = await getDb();
  const [keys, endpoints] = await Promise.all([listApiKeys(db), admin ? listEndpointChoices(db) : Promise.resolve([])]);
  return (
    <section className="space-y-8">
      <div>
        <h1 className="text-2xl font-semibold">API keys</h1>
        <p className="mt-1 max-w-3xl text-sm text-zinc-600 dark:text-zinc-400">
          Services that cannot reach the database call the HTTP API with one of these keys. A key spends for one billing
          account (all keys of an account share its per-caller ceilings) or is a trusted service that names the account on
          each call. Only a hash of each key is stored; the key itself is shown once, when it is created.
          {admin ? null : " Admins create and revoke keys."}
        </p>
      </div>
      <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800">
        <table className="min-w-full divide-y divide-zinc-200 text-sm dark:divide-zinc-800">
          <thead className="bg-zinc-100 text-left dark:bg-zinc-900">
            <tr>
              <th scope="col" className="px-3 py-2 font-medium">Name</th>
              <th scope="col" className="px-3 py-2 font-medium">Key</th>
              <th scope="col" className="px-3 py-2 font-medium">Spends for</th>
              <th scope="col" className="px-3 py-2 font-medium">Endpoints</th>
              <th scope="col" className="px-3 py-2 font-medium">Created (UTC)</th>
              <th scope="col" className="px-3 py-2 font-medium">Last used (UTC)</th>
              <th scope="col" className="px-3 py-2 font-medium">Status</th>
            </tr>
          </thead>
          <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
            {keys.length === 0 ? (
              <tr>
                <td colSpan={7} className="px-3 py-6 text-center text-zinc-500">
                  No API keys yet.
                </td>
              </tr>
            ) : null}
            {keys.map((k) => (
              <tr key={k.id} data-testid="api-key-row" data-prefix={k.prefix} className={k.revokedAt ? "text-zinc-500" : undefined}>
                <td className={cell}>{k.name}</td>
                <td className={`${cell} font-mono`}>ck_{k.prefix}_…</td>
                <td className={cell}>{k.trusted ? <span className="italic">trusted service</span> : <span className="font-mono">{k.account}</span>}</td>
                <td className={`${cell} font-mono text-xs`}>{k.endpointKeys.join(", ")}</td>
                <td className={cell}>
                  {formatDateTime(k.createdAt)}
                  <div className="text-xs text-zinc-500">by {k.createdBy}</div>
                </td>
                <td className={cell}>{k.lastUsedAt ? formatDateTime(k.lastUsedAt) : <span className="text-zinc-500">never</span>}</td>
                <td className={cell}>
                  {k.revokedAt ? (
                    <span className="text-red-700 dark:text-red-400">revoked {formatDateTime(k.revokedAt)}</span>
                  ) : admin ? (
                    <div className="space-y-1">
                      <span>active</span>
                      <RevokeApiKeyButton id={k.id} label={`${k.name} (ck_${k.prefix})`} />
                    </div>
                  ) : (
                    "active"
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {admin ? <CreateApiKeyForm endpoints={endpoints} /> : null}
    </section>
  );
}
