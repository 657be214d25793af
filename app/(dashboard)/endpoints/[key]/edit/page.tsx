import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AskRaiseForm } from "@/components/ask-raise-form";
import { ConfirmActionButton } from "@/components/confirm-action-button";
import { cardClass } from "@/components/ui";
import { CatalogError, ceilingSentence, readCatalogEndpoint, type CatalogEndpoint } from "@/lib/catalog";
import { ceilingSpecOf } from "@/lib/catalog/read";
import { runAction } from "@/app/(dashboard)/actions";
import { AddCeilingForm, AlertThresholdsForm, EditEndpointForm } from "../../_components/edit-endpoint-forms";
import type { EndpointFieldsText } from "../../_components/endpoint-fields";
import { partRowsOf } from "../../_components/part-rows";

const archiveEndpointAction = runAction.bind(null, "endpoint.archive");
const removeCeilingAction = runAction.bind(null, "ceiling.remove");

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ key: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  return { title: `Edit ${decodeURIComponent((await params).key)} · Ceilings` };
}

async function load(key: string): Promise<CatalogEndpoint | null> {
  try {
    return await readCatalogEndpoint(await getDb(), key);
  } catch (error) {
    if (error instanceof CatalogError && error.code === "not_found") return null;
    throw error;
  }
}

export default async function EditEndpointPage({ params }: Params) {
  await requirePageRole("admin");
  const key = decodeURIComponent((await params).key);
  const found = await load(key);
  if (!found) notFound();
  const { endpoint, ceilings } = found;
  const archived = endpoint.archivedAt !== null;
  const text: EndpointFieldsText = {
    name: endpoint.name,
    unit: endpoint.unit,
    parts: partRowsOf(endpoint.parts),
    currency: endpoint.currency,
    planAllowance: endpoint.planAllowance === null ? "" : String(endpoint.planAllowance),
    billingDay: String(endpoint.billingDay),
    perCallMax: String(endpoint.perCallMax),
    throttlePerMinute: endpoint.throttlePerMinute === null ? "" : String(endpoint.throttlePerMinute),
    throttleFailOpen: endpoint.throttleFailOpen,
  };
  const globals = ceilings.filter((c) => c.scope === "global").length;
  return (
    <div className="space-y-8">
      <div>
        <p className="text-sm">
          <Link href={`/endpoints/${encodeURIComponent(key)}`} className="underline underline-offset-2">
            {key}
          </Link>
        </p>
        <h1 className="break-all text-2xl font-semibold tracking-tight">
          Edit <span className="font-mono">{key}</span>
        </h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Every change waits for reservations in flight, binds the next one, and is one audit event.</p>
      </div>

      <section aria-labelledby="fields-title" className={`${cardClass} space-y-3`}>
        <h2 id="fields-title" className="text-lg font-semibold">
          Endpoint
        </h2>
        <EditEndpointForm endpointKey={key} version={endpoint.version} initial={text} />
      </section>

      <section aria-labelledby="ceilings-title" className={`${cardClass} space-y-3`}>
        <h2 id="ceilings-title" className="text-lg font-semibold">
          Ceilings
        </h2>
        <ul className="space-y-3" aria-label="Ceilings of this endpoint">
          {ceilings.map((c) => {
            const sentence = ceilingSentence({ ...ceilingSpecOf(c), value: c.value }, { ...endpoint, key });
            const lastGlobal = c.scope === "global" && globals === 1;
            return (
              <li
                key={c.id}
                className="space-y-2 border-b border-zinc-200 pb-3 text-sm last:border-0 dark:border-zinc-800"
                data-testid={`catalog-ceiling-${c.id}`}
              >
                <div className="flex flex-wrap items-center justify-between gap-2">
                  <span>
                    <span className="font-medium">
                      #{c.id} {sentence.guarantee}
                    </span>
                    {sentence.worstCase ? <span className="text-zinc-600 dark:text-zinc-400"> · {sentence.worstCase}</span> : null}
                  </span>
                  {lastGlobal ? (
                    <span className="text-xs text-zinc-600 dark:text-zinc-400">the last global ceiling: it bounds the worst case and stays</span>
                  ) : (
                    <ConfirmActionButton
                      action={removeCeilingAction}
                      label="Remove"
                      title={`Remove ceiling #${c.id}?`}
                      description={`"${sentence.guarantee}" stops counting from the next reservation. Its counters go with it; the audit log keeps its definition.`}
                      confirmLabel="Remove ceiling"
                      fields={{ key, ceilingId: String(c.id) }}
                      reason="required"
                      tone="danger"
                      testId={`remove-ceiling-${c.id}`}
                    />
                  )}
                </div>
                <AlertThresholdsForm endpointKey={key} ceilingId={c.id} thresholds={c.alertThresholds} />
              </li>
            );
          })}
        </ul>
        <h3 className="text-base font-semibold">Add a ceiling</h3>
        <AddCeilingForm endpointKey={key} preview={text} />
      </section>

      <section aria-labelledby="archive-title" className={`${cardClass} space-y-3`}>
        <h2 id="archive-title" className="text-lg font-semibold">
          {archived ? "Archived" : "Archive"}
        </h2>
        <p className="text-sm">
          {archived
            ? "Every reservation is refused as endpoint_archived. Unarchiving lets reservations be decided again, under the ceilings in force."
            : "Archiving refuses every reservation as endpoint_archived (HTTP 410) from the next one on and charges nothing; its history, charts and refusals stay. Nothing is ever deleted."}
        </p>
        {/* Unarchiving lets spend resume: a raise, asked of a second admin (or break glass). */}
        {archived ? (
          <AskRaiseForm kind="endpoint.unarchive" fields={{ key }} canBreakGlass what="Unarchiving lets spend resume" />
        ) : (
          <ConfirmActionButton
            action={archiveEndpointAction}
            label="Archive endpoint"
            title={`Archive ${key}?`}
            description="Every reservation is refused from the next one on."
            confirmLabel="Archive"
            fields={{ key }}
            reason="required"
            tone="danger"
            testId="archive-endpoint"
          />
        )}
      </section>
    </div>
  );
}
