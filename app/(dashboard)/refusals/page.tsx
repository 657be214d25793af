import type { Metadata } from "next";
import Link from "next/link";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { RefusalsByGateChart } from "@/components/charts/refusals-by-gate-chart";
import { formatCount, formatUtc } from "@/lib/format";
import { RefusalsFilters } from "./_components/refusals-filters";
import { RefusalsTable } from "@/components/refusals-table";
import { secondaryButtonClass } from "@/components/ui";
import { DEFAULT_CHART_RANGE_MS, filterParams, type RefusalFilters } from "@/lib/refusals";
import { bucketLabel, loadRefusalsView, type RefusalsView } from "./load";

export const metadata: Metadata = { title: "Refusals · Ceilings" };
export const dynamic = "force-dynamic";

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

function href(path: string, filters: RefusalFilters, extra: Record<string, string> = {}): string {
  const p = filterParams(filters);
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `${path}?${s}` : path;
}

function countSentence(view: RefusalsView): string {
  const total = view.total.exact ? formatCount(view.total.n) : `about ${formatCount(view.total.n)}`;
  const row = view.total.n === 1 ? "row" : "rows";
  const oldest = view.oldest ? `, the oldest from ${formatUtc(view.oldest)}` : "";
  return `${total} ${row} in the log${oldest}. Refusals older than ${view.retentionDays} days are purged.`;
}

function chartCaption(view: RefusalsView): string {
  if (!view.chart) return "";
  const per = bucketLabel(view.chart.bucketMs);
  if (!view.filters.from && !view.filters.to && view.chart.to.getTime() - view.chart.from.getTime() === DEFAULT_CHART_RANGE_MS) {
    return `last 7 days, ${per}`;
  }
  return `${formatUtc(view.chart.from)} to ${formatUtc(view.chart.to)}, ${per}`;
}

export default async function RefusalsPage({ searchParams }: { searchParams: SearchParams }) {
  const staff = await requirePageRole("viewer");
  const view = await loadRefusalsView(await getDb(), await searchParams);
  const { filters, page, chart, matching } = view;
  const masked = staff.role !== "admin";

  return (
    <div className="space-y-6">
      <div>
        <h1 className="text-2xl font-semibold tracking-tight">Refusals</h1>
        <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="refusals-count">
          {countSentence(view)}
        </p>
      </div>
      <RefusalsFilters values={view.raw} endpointKeys={view.endpointKeys} />
      {view.errors.length > 0 ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400" data-testid="refusals-errors">
          These filters are not valid: {view.errors.join("; ")}
        </p>
      ) : (
        <>
          {chart ? <RefusalsByGateChart buckets={chart.buckets} bucketMs={chart.bucketMs} totals={chart.totals} caption={chartCaption(view)} /> : null}
          <div className="flex flex-wrap items-center justify-between gap-3">
            <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="refusals-matching">
              {matching
                ? `${matching.exact ? "" : "more than "}${formatCount(matching.n)} matching ${matching.n === 1 ? "row" : "rows"}, newest first.`
                : "Every refusal, newest first."}
            </p>
            <div className="flex items-center gap-3">
              <span className="text-xs text-zinc-600 dark:text-zinc-400">
                {masked ? "Callers and destinations are masked in the export (admins get them in full)." : "The export holds callers and destinations in full."}
              </span>
              {/* A POST form, not a link: the export writes an audit row, and a GET must change nothing. */}
              <form method="post" action="/refusals/export">
                {[...filterParams(filters)].map(([name, value]) => (
                  <input key={name} type="hidden" name={name} value={value} />
                ))}
                <button type="submit" className={secondaryButtonClass} data-testid="refusals-export">
                  Export CSV
                </button>
              </form>
            </div>
          </div>
          <RefusalsTable rows={page.rows} caption="Refusals, newest first" />
          <nav aria-label="Refusal pages" className="flex gap-2">
            {page.newer !== null || view.raw.before || view.raw.after ? (
              <Link href={href("/refusals", filters)} className={secondaryButtonClass}>
                Newest
              </Link>
            ) : null}
            {page.newer ? (
              <Link href={href("/refusals", filters, { after: page.newer })} className={secondaryButtonClass} data-testid="refusals-newer">
                Newer
              </Link>
            ) : null}
            {page.older ? (
              <Link href={href("/refusals", filters, { before: page.older })} className={secondaryButtonClass} data-testid="refusals-older">
                Older
              </Link>
            ) : null}
          </nav>
        </>
      )}
    </div>
  );
}
