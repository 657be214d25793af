import type { Metadata } from "next";
import Link from "next/link";
import { Fragment } from "react";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { DataTable, type TableSpec } from "@/components/data-table";
import { Money } from "@/components/money";
import { buttonClass } from "@/components/ui";
import { hasRole } from "@/lib/auth/roles";
import { formatAgo, formatCount, formatDay, formatMoneyText, formatUnits } from "@/lib/format";
import { completeDays } from "@/lib/reconciliation/days";
import { reconciliationGrid, reconciliationSources, type GridDay, type ReconGridRow, type UsageSourceListItem } from "@/lib/reconciliation/read";
import { usageSourceKindLabels } from "@/lib/reconciliation/types";
import { unmappedWeek, type UnmappedSourceWeek } from "@/lib/reconciliation/unmapped";
import { driftDirectionSentence, driftPercentText } from "@/lib/reconciliation/words";

export const metadata: Metadata = { title: "Reconciliation · Ceilings" };
export const dynamic = "force-dynamic";

// Does the ledger match the bill: every endpoint and budget a usage source maps, with the drift of
// its last 7 provider days, then what nothing maps, then the sources themselves. Money billed on
// items no rule maps leads: it is the surprise no comparison can show.

function targetHref(r: ReconGridRow): string {
  return r.target === "endpoint" ? `/endpoints/${encodeURIComponent(r.key)}#reconciliation` : `/budgets/${encodeURIComponent(r.key)}`;
}

/** One day of one target: the drift in words and color, or why there is none. */
function DayCell({ d, row, showDate }: { d: GridDay | undefined; row: ReconGridRow; showDate: boolean }) {
  if (!d) return null;
  const date = showDate ? <span className="block text-xs text-zinc-500">{formatDay(d.day)}</span> : null;
  if (!d.drift || !d.billed || !d.charged) {
    return (
      <span data-day={d.day} data-state="none" className="text-xs text-zinc-600 dark:text-zinc-400">
        {date}not compared
      </span>
    );
  }
  // A title has no tooltip of its own: the exact follows where cents hide a difference.
  const money = (m: number) => formatMoneyText(m, row.currency);
  // A budget's day whose rows carry no money is compared in units alone: its units, not $0.
  const units = (n: number) => (row.unit ? formatUnits(n, row.unit) : `${formatCount(n)} units`);
  const side = (m: { units: number; micros: number }) => (d.unitsOnly ? units(m.units) : `${money(m.micros)}${row.unit ? ` (${units(m.units)})` : ""}`);
  const title = `billed ${side(d.billed)}, charged ${side(d.charged)}${d.unitsOnly ? " (units only: the provider's rows carry no money)" : ""}: ${driftDirectionSentence(d.drift)}`;
  const extra = [d.unitsOnly ? "units only" : null, d.held > 0 ? `${d.held} held` : null].filter((x) => x !== null).join(" · ");
  const note = extra ? <span className="block text-xs font-normal text-zinc-600 dark:text-zinc-400">{extra}</span> : null;
  if (!d.final) {
    // Reservations still held, or a provider that may still report the day: not alerted, not over.
    return (
      <span data-day={d.day} data-state="not-final" title={`${title}; not final yet`} className="text-zinc-600 dark:text-zinc-400">
        {date}
        {driftPercentText(d.drift)} <span className="text-xs font-normal">not final</span>
        {note}
      </span>
    );
  }
  return (
    <span
      data-day={d.day}
      data-state={d.drift.over ? "over" : "within"}
      title={title}
      className={d.drift.over ? "font-semibold text-red-800 dark:text-red-300" : "text-emerald-800 dark:text-emerald-300"}
    >
      {date}
      {driftPercentText(d.drift)} <span className="text-xs font-normal">{d.drift.over ? "over" : "ok"}</span>
      {note}
    </span>
  );
}

function gridTable(axis: string[]): TableSpec<ReconGridRow> {
  return {
    testId: "reconciliation-grid",
    rowKey: (r) => `${r.target}-${r.id}`,
    rowAttributes: (r) => ({ "data-target": r.target, "data-key": r.key, "data-over-days": String(r.overDays) }),
    empty: (
      <p className="text-sm text-zinc-600 dark:text-zinc-400">No source maps any endpoint or budget yet: add a source, then a rule for each provider item.</p>
    ),
    columns: [
      {
        header: "Endpoint or budget",
        cell: (r) => (
          <span>
            <Link href={targetHref(r)} className="font-mono underline-offset-2 hover:underline">
              {r.key}
            </Link>
            {r.target === "budget" ? <span className="ml-1 text-xs text-zinc-600 dark:text-zinc-400">(budget)</span> : null}
          </span>
        ),
      },
      {
        header: "Source",
        cell: (r) =>
          r.source ? (
            <Link href={`/reconciliation/sources/${r.source.id}`} className="underline-offset-2 hover:underline">
              {r.source.name}
            </Link>
          ) : (
            "none"
          ),
      },
      // A source in another zone may be a day behind UTC: its cells then say their own date.
      ...axis.map((day, i) => ({
        header: formatDay(day),
        cell: (r: ReconGridRow) => <DayCell d={r.days[i]} row={r} showDate={r.days[i]?.day !== day} />,
      })),
      { header: "Days over", className: "text-right", cell: (r) => String(r.overDays) },
    ],
  };
}

function unmappedTable(isAdmin: boolean): TableSpec<UnmappedSourceWeek> {
  return {
    testId: "unmapped-money-table",
    rowKey: (u) => u.sourceId,
    rowAttributes: (u) => ({ "data-source": u.name, "data-micros": String(u.micros) }),
    empty: null,
    columns: [
      {
        header: "Source",
        cell: (u) => (
          <Link href={`/reconciliation/sources/${u.sourceId}`} className="font-medium underline-offset-2 hover:underline">
            {u.name}
          </Link>
        ),
      },
      {
        header: "Unmapped money",
        className: "text-right",
        cell: (u) => <Money micros={u.micros} currency={u.currency} className="font-semibold text-red-800 dark:text-red-300" />,
      },
      {
        header: "Days alerted",
        className: "text-right",
        cell: (u) => <span title={`a day alerts from ${formatMoneyText(u.thresholdMicros, u.currency)} on unmapped items`}>{u.daysOver} of 7</span>,
      },
      {
        header: "Costliest items",
        cell: (u) => (
          <span className="break-all font-mono text-xs">
            {u.items.map((i, n) => (
              <Fragment key={i.item}>
                {n > 0 ? ", " : ""}
                {i.item} (<Money micros={i.micros} currency={u.currency} />)
              </Fragment>
            ))}
          </span>
        ),
      },
      {
        header: <span className="sr-only">Map</span>,
        label: "Map",
        cell: (u) => (
          <Link href={`/reconciliation/sources/${u.sourceId}#unmapped`} className="underline underline-offset-2" data-testid="unmapped-map-it">
            {isAdmin ? "Map it" : "See the items"}
          </Link>
        ),
      },
    ],
  };
}

function describePull(s: UsageSourceListItem, now: Date) {
  if (!s.enabled) return <span className="text-zinc-600 dark:text-zinc-400">paused</span>;
  const requested = s.pullRequestedAt ? <span className="block text-xs">pull requested {formatAgo(s.pullRequestedAt, now)}</span> : null;
  if (s.lastPullError) {
    return (
      <span className="text-red-800 dark:text-red-300" data-state="error">
        failed {s.lastPullAt ? formatAgo(s.lastPullAt, now) : ""}: {s.lastPullError}
        {requested}
      </span>
    );
  }
  return (
    <span data-state={s.lastPullOkAt ? "ok" : "never"}>
      {s.lastPullOkAt ? `ok ${formatAgo(s.lastPullOkAt, now)}` : "not pulled yet"}
      {requested}
    </span>
  );
}

function sourcesTable(now: Date): TableSpec<UsageSourceListItem> {
  return {
    testId: "usage-sources",
    rowKey: (s) => s.id,
    rowAttributes: (s) => ({ "data-source": s.name }),
    empty: <p className="text-sm text-zinc-600 dark:text-zinc-400">No usage source yet.</p>,
    columns: [
      {
        header: "Source",
        cell: (s) => (
          <Link href={`/reconciliation/sources/${s.id}`} className="font-medium underline-offset-2 hover:underline">
            {s.name}
          </Link>
        ),
      },
      { header: "Kind", cell: (s) => usageSourceKindLabels[s.kind] },
      { header: "Days in", cell: (s) => s.timeZone },
      { header: "Rules", className: "text-right", cell: (s) => String(s.rules) },
      { header: "Last pull", cell: (s) => describePull(s, now) },
    ],
  };
}

export default async function ReconciliationPage() {
  const staff = await requirePageRole("viewer");
  const now = new Date();
  const db = await getDb();
  const [grid, sources, unmapped] = await Promise.all([reconciliationGrid(db, { now }), reconciliationSources(db), unmappedWeek(db, now)]);
  const isAdmin = hasRole(staff.role, "admin");
  const reconciled = grid.filter((r) => r.source !== null);
  const notReconciled = grid.filter((r) => r.source === null);
  const axis = completeDays(now, "UTC", 7);
  return (
    <div className="space-y-8">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <h1 className="text-2xl font-semibold tracking-tight">Reconciliation</h1>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            What each provider billed beside what Ceilings charged, per provider day. More billed than charged means calls bypass Ceilings or settle low; less
            means settles overstate.
          </p>
        </div>
        {isAdmin ? (
          <Link href="/reconciliation/sources/new" className={buttonClass} data-testid="add-usage-source">
            Add a source
          </Link>
        ) : null}
      </div>

      {unmapped.length > 0 ? (
        <section aria-labelledby="unmapped-title" className="space-y-3" data-testid="unmapped-money">
          <h2 id="unmapped-title" className="text-lg font-semibold">
            Billed on unmapped items
          </h2>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            Money the providers billed, last 7 days, on items no rule maps: nothing compares it with what Ceilings charged. A new model a team started using, or
            a key used somewhere it should not be. Map each item to the endpoint that spends it.
          </p>
          <DataTable spec={unmappedTable(isAdmin)} caption="Money on unmapped items by source, last 7 provider days" rows={unmapped} />
        </section>
      ) : null}

      <section aria-labelledby="grid-title" className="space-y-3">
        <h2 id="grid-title" className="text-lg font-semibold">
          Last 7 days
        </h2>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          Each day is the provider&apos;s own (UTC for OpenAI, Anthropic, Twilio and SendGrid; US Eastern for Postmark; SES and a file source in the zone they
          name): Ceilings counts its charges over the same interval. Today is never complete, so it is never compared. &quot;over&quot; is past the
          source&apos;s threshold (by default 2 % and $1 together); &quot;not final&quot; is a day that may still move (reservations still held, or a provider
          that may still report it): it is neither alerted nor counted over until it is final.
        </p>
        <DataTable spec={gridTable(axis)} caption="Drift of every reconciled endpoint and budget, last 7 provider days" rows={reconciled} />
      </section>

      {notReconciled.length > 0 ? (
        <section aria-labelledby="unreconciled-title" className="space-y-3" data-testid="not-reconciled">
          <h2 id="unreconciled-title" className="text-lg font-semibold">
            Not reconciled
          </h2>
          <p className="text-sm text-zinc-600 dark:text-zinc-400">
            No source maps these endpoints: nothing checks what they spend against the provider&apos;s bill.
          </p>
          <ul className="flex flex-wrap gap-2 text-sm">
            {notReconciled.map((r) => (
              <li key={r.id} data-key={r.key} className="rounded-md border border-zinc-200 px-2 py-1 dark:border-zinc-800">
                <Link href={targetHref(r)} className="font-mono underline-offset-2 hover:underline">
                  {r.key}
                </Link>{" "}
                <span className="text-xs text-zinc-600 dark:text-zinc-400">not reconciled</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      <section aria-labelledby="sources-title" className="space-y-3">
        <h2 id="sources-title" className="text-lg font-semibold">
          Usage sources
        </h2>
        {/* Named apart from its section: two landmarks called "Usage sources" are one too many (axe: landmark-unique). */}
        <DataTable spec={sourcesTable(now)} caption="Each usage source and its last pull" rows={sources} />
      </section>
    </div>
  );
}
