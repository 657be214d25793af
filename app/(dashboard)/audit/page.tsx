import type { Metadata } from "next";
import Link from "next/link";
import { z } from "zod";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { AuditTable } from "@/components/audit-table";
import { FilterForm, FilterInput, FilterSelect } from "@/components/filter-form";
import { secondaryButtonClass } from "@/components/ui";
import { listEndpointKeys } from "@/lib/catalog";
import { AuditFilters, listAuditEvents, listAuditFacets } from "@/lib/audit/log";
import { blankToUndefined } from "@/lib/search-params";

export const metadata: Metadata = { title: "Audit log · Ceilings" };
export const dynamic = "force-dynamic";

// The filter form is a plain GET form: it works without JavaScript and every view is a link.
const Query = z.object({
  endpoint: z.string().optional(),
  actor: z.string().optional(),
  action: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
  cursor: z.string().optional(),
});
type Query = z.infer<typeof Query>;

// <input type="datetime-local"> sends "2025-06-01T09:30" with no zone; the page works in UTC.
const localToIso = (s: string | undefined) => {
  const v = blankToUndefined(s);
  return v && /^\d{4}-\d\d-\d\dT\d\d:\d\d$/.test(v) ? `${v}:00Z` : v;
};

function pageHref(q: Query, cursor: string | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...q, cursor })) if (v) params.set(k, v);
  const s = params.toString();
  return s ? `/audit?${s}` : "/audit";
}

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function AuditPage({ searchParams }: { searchParams: SearchParams }) {
  await requirePageRole("viewer");
  const raw = await searchParams;
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const q = Query.parse({
    endpoint: first(raw.endpoint),
    actor: first(raw.actor),
    action: first(raw.action),
    from: first(raw.from),
    to: first(raw.to),
    cursor: first(raw.cursor),
  });
  const input = {
    endpoint: blankToUndefined(q.endpoint),
    actor: blankToUndefined(q.actor),
    action: blankToUndefined(q.action),
    from: localToIso(q.from),
    to: localToIso(q.to),
    cursor: blankToUndefined(q.cursor),
    limit: 50,
  };
  // Checked here so a bad link shows a message instead of an error page; the lib parses it again.
  const filters = AuditFilters.safeParse(input);
  const db = await getDb();
  const [facets, endpointKeys, page] = await Promise.all([
    listAuditFacets(db),
    listEndpointKeys(db),
    filters.success ? listAuditEvents(db, input) : Promise.resolve(null),
  ]);

  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Audit log</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Every adjustment, kill, restore, bounds change, override, API key and staff change. Nobody can edit it.
        </p>
      </div>
      <FilterForm action="/audit" label="Filter the audit log" columns="lg:grid-cols-6">
        <FilterSelect name="endpoint" label="Endpoint" value={q.endpoint} options={endpointKeys} />
        <FilterSelect name="actor" label="Actor" value={q.actor} options={facets.actors} />
        {/* A family (ceiling.*) first, then each action in it. */}
        <FilterSelect
          name="action"
          label="Kind"
          value={q.action}
          options={[
            ...[...new Set(facets.actions.map((a) => a.split(".")[0] ?? a))].map((family) => ({ value: family, label: `${family}.*` })),
            ...facets.actions,
          ]}
        />
        <FilterInput name="from" label="From (UTC)" type="datetime-local" value={q.from} />
        <FilterInput name="to" label="Before (UTC)" type="datetime-local" value={q.to} />
      </FilterForm>
      {page === null ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400">
          These filters are not valid: {filters.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}
        </p>
      ) : (
        <>
          <AuditTable events={page.events} caption="Audit events, newest first" />
          <nav aria-label="Audit log pages" className="flex gap-2">
            {q.cursor ? (
              <Link href={pageHref(q, undefined)} className={secondaryButtonClass}>
                Newest
              </Link>
            ) : null}
            {page.nextCursor ? (
              <Link href={pageHref(q, page.nextCursor)} className={secondaryButtonClass} data-testid="audit-older">
                Older
              </Link>
            ) : null}
          </nav>
        </>
      )}
    </div>
  );
}
