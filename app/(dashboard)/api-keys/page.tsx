import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { hasRole } from "@/lib/auth/roles";
import { DataTable, type TableSpec } from "@/components/data-table";
import { listApiKeys, listEndpointChoices, SCOPE_MEANINGS, type ApiKeySummary } from "@/lib/api-keys";
import { formatDateTime } from "@/lib/format";
import { CreateApiKeyForm } from "./_components/create-api-key-form";
import { RevokeApiKeyButton } from "./_components/revoke-api-key-button";

export const metadata: Metadata = { title: "API keys" };

// Top-aligned: the created and status cells run to two lines.
function apiKeyTable(admin: boolean): TableSpec<ApiKeySummary> {
  return {
    rowKey: (k) => k.id,
    rowAttributes: (k) => ({ "data-testid": "api-key-row", "data-prefix": k.prefix, className: k.revokedAt ? "text-zinc-500" : undefined }),
    empty: (
      <p className="rounded-lg border border-dashed border-zinc-300 p-6 text-sm text-zinc-600 dark:border-zinc-700 dark:text-zinc-400">No API keys yet.</p>
    ),
    columns: [
      { header: "Name", cellClassName: "align-top", cell: (k) => k.name },
      { header: "Key", cellClassName: "align-top font-mono", cell: (k) => `ck_${k.prefix}_…` },
      {
        header: "Spends for",
        cellClassName: "align-top",
        cell: (k) => (k.trusted ? <span className="italic">trusted service</span> : <span className="font-mono">{k.account}</span>),
      },
      {
        header: "Scopes",
        cellClassName: "align-top",
        cell: (k) => (
          <ul className="space-y-0.5" data-testid="api-key-scopes">
            {k.scopes.map((s) => (
              <li key={s} title={SCOPE_MEANINGS[s]} className="font-mono text-xs">
                {s}
              </li>
            ))}
          </ul>
        ),
      },
      {
        header: "Endpoints",
        cellClassName: "align-top font-mono text-xs",
        cell: (k) => (k.endpointKeys.length > 0 ? k.endpointKeys.join(", ") : <span className="font-sans text-zinc-500">none</span>),
      },
      {
        header: "Created (UTC)",
        cellClassName: "align-top",
        cell: (k) => (
          <>
            {formatDateTime(k.createdAt)}
            <div className="text-xs text-zinc-500">by {k.createdBy}</div>
          </>
        ),
      },
      {
        header: "Last used (UTC)",
        cellClassName: "align-top",
        cell: (k) => (k.lastUsedAt ? formatDateTime(k.lastUsedAt) : <span className="text-zinc-500">never</span>),
      },
      {
        header: "Status",
        cellClassName: "align-top",
        cell: (k) =>
          k.revokedAt ? (
            <span className="text-red-700 dark:text-red-400">revoked {formatDateTime(k.revokedAt)}</span>
          ) : admin ? (
            <div className="space-y-1">
              <span>active</span>
              <RevokeApiKeyButton id={k.id} label={`${k.name} (ck_${k.prefix})`} />
            </div>
          ) : (
            "active"
          ),
      },
    ],
  };
}

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
          Services that cannot reach the database call the HTTP API with one of these keys. A key spends for one billing account (all keys of an account share
          its per-caller ceilings) or is a trusted service that names the account on each call. A key&apos;s scopes say what it may do:{" "}
          <span className="font-mono">reserve</span> on the endpoints it is bound to, or, with no endpoint, <span className="font-mono">accounts:read</span> and{" "}
          <span className="font-mono">accounts:write</span> (a billing service reading and moving accounts between plans). Only a hash of each key is stored;
          the key itself is shown once, when it is created.
          {admin ? null : " Admins create and revoke keys."}
        </p>
      </div>
      <DataTable spec={apiKeyTable(admin)} caption="API keys" rows={keys} />
      {admin ? <CreateApiKeyForm endpoints={endpoints} /> : null}
    </section>
  );
}
