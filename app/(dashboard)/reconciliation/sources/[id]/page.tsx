import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { runAction } from "@/app/(dashboard)/actions";
import { requirePageRole } from "@/app/_lib/session";
import { AlertsActionForm } from "@/components/alerts-action-form";
import { AutoRefresh } from "@/components/auto-refresh";
import { Money } from "@/components/money";
import { cardClass, secondaryButtonClass } from "@/components/ui";
import { hasRole } from "@/lib/auth/roles";
import { moneyInputText } from "@/lib/limits/parse";
import { formatCount, formatDateTime } from "@/lib/format";
import { isProviderDay } from "@/lib/reconciliation/days";
import { basisPointsText, getUsageSourceDetail, listRuleTargets, sourceVersion } from "@/lib/reconciliation/sources";
import { usageSourceKindLabels } from "@/lib/reconciliation/types";
import { firstValues } from "@/lib/search-params";
import { DeleteSourceButton } from "../_components/delete-source-button";
import { ImportForm } from "../_components/import-form";
import { RuleForm } from "../_components/rule-form";
import { SourceForm } from "../_components/source-form";
import { PullsTable, RawRowsTable, RulesTable, UnmappedTable } from "../_components/source-tables";

export const dynamic = "force-dynamic";

type Props = { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

const pullAction = runAction.bind(null, "usage_source.pull");
const pauseAction = runAction.bind(null, "usage_source.pause");
const resumeAction = runAction.bind(null, "usage_source.resume");
const muted = "text-sm text-zinc-600 dark:text-zinc-400";

const idOf = (raw: string) => (/^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : null);

export async function generateMetadata(): Promise<Metadata> {
  return { title: "Usage source · Reconciliation · Ceilings" };
}

export default async function UsageSourcePage({ params, searchParams }: Props) {
  const staff = await requirePageRole("viewer");
  const canPull = hasRole(staff.role, "operator");
  const isAdmin = hasRole(staff.role, "admin");
  const id = idOf((await params).id);
  if (id === null) notFound();
  const raw = firstValues(await searchParams);
  // A hand-edited link with a bad day or cursor shows the latest day from its start.
  const day = raw.day && isProviderDay(raw.day) ? raw.day : null;
  const after = raw.after && /^\d{1,15}$/.test(raw.after) ? Number(raw.after) : null;
  const db = await getDb();
  const [d, targets] = await Promise.all([getUsageSourceDetail(db, id, { day, after: day ? after : null }), isAdmin ? listRuleTargets(db) : null]);
  if (!d) notFound();
  const s = d.source;
  const path = `/reconciliation/sources/${s.id}`;
  const money = (m: number) => <Money micros={m} currency={s.currency} />;
  const canPullNow = s.enabled && !(s.kind === "file" && s.location === null);

  return (
    <div className="space-y-8">
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <p className="text-sm">
            <Link href="/reconciliation" className="text-zinc-600 underline-offset-2 hover:underline dark:text-zinc-400">
              Reconciliation
            </Link>
          </p>
          <h1 className="break-words text-2xl font-semibold tracking-tight" data-testid="source-name">
            {s.name}
          </h1>
          <p className={muted}>
            {usageSourceKindLabels[s.kind]} · days in {s.timeZone} · {s.currency}
          </p>
        </div>
        <span
          className={`rounded-full px-2.5 py-1 text-xs font-medium ${s.enabled ? "bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200" : "bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200"}`}
          data-testid="source-state"
        >
          {s.enabled ? "Running" : "Paused"}
        </span>
      </div>

      <section aria-labelledby="pull-title" className={`${cardClass} space-y-3`}>
        <h2 id="pull-title" className="text-lg font-semibold">
          Pulls
        </h2>
        <dl className="grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]">
          <dt className="text-zinc-600 dark:text-zinc-400">Last pull</dt>
          <dd data-testid="source-last-pull">
            {s.lastPullAt === null ? "never" : formatDateTime(s.lastPullAt)}
            {s.lastPullError ? null : s.lastPullOk ? ` (ok)` : ""}
          </dd>
          {s.lastPullError ? (
            <>
              <dt className="text-zinc-600 dark:text-zinc-400">Last error</dt>
              <dd className="break-words text-red-800 dark:text-red-300" role="status" data-testid="source-last-error">
                {s.lastPullError}
                {s.lastPullOk ? ` (last good pull ${formatDateTime(s.lastPullOk)}; its days are kept)` : ""}
              </dd>
            </>
          ) : null}
          <dt className="text-zinc-600 dark:text-zinc-400">Pulled</dt>
          <dd data-testid="source-pull-at">
            {s.kind === "file" && s.location === null ? "by hand (import below)" : `each day at ${s.pullAt.slice(0, 5)} ${s.timeZone}, and on Pull now`}
          </dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Each pull</dt>
          <dd>
            the {s.lookbackDays} complete day{s.lookbackDays === 1 ? "" : "s"} before today in {s.timeZone}, each replaced whole
            {s.kind === "file" && s.location === null ? "; this source has no location: import its files below" : ""}
          </dd>
          <dt className="text-zinc-600 dark:text-zinc-400">Alerts when</dt>
          <dd>
            billed and charged differ by at least {basisPointsText(s.thresholdBasisPoints)} % and {money(s.thresholdMicros)} on a day, or a day bills{" "}
            {s.unmappedThresholdMicros === 0 ? "any money" : <>{money(s.unmappedThresholdMicros)} or more</>} on items no rule maps
          </dd>
        </dl>
        {s.pullRequestedAt ? (
          <div className="flex flex-wrap items-center gap-3">
            <p className="text-sm font-medium" role="status" data-testid="pull-requested">
              Requested at {formatDateTime(s.pullRequestedAt, { seconds: true })} (the worker pulls within a few seconds).
            </p>
            <AutoRefresh seconds={5} />
          </div>
        ) : null}
        <div className="flex flex-wrap items-start gap-2">
          {canPull && canPullNow ? (
            <AlertsActionForm action={pullAction} fields={{ sourceId: s.id }} label="Pull now" pendingLabel="Asking…" tone="primary" testId="pull-now" />
          ) : null}
          {isAdmin ? (
            s.enabled ? (
              <AlertsActionForm action={pauseAction} fields={{ sourceId: s.id }} label="Pause" pendingLabel="Pausing…" testId="pause-source" />
            ) : (
              <AlertsActionForm action={resumeAction} fields={{ sourceId: s.id }} label="Resume" pendingLabel="Resuming…" testId="resume-source" />
            )
          ) : null}
        </div>
      </section>

      <section aria-labelledby="rules-title" className="space-y-3" id="rules">
        <h2 id="rules-title" className="text-lg font-semibold">
          Rules
        </h2>
        <p className={muted}>
          Which endpoint or budget each item the provider reports counts for. A rule applies from the next pull; Pull now re-maps the recent days.
        </p>
        <RulesTable rules={d.rules} sourceId={s.id} isAdmin={isAdmin} />
        {isAdmin && targets ? (
          <div className={cardClass}>
            <RuleForm sourceId={s.id} kind={s.kind} currency={s.currency} targets={targets} match={raw.map?.slice(0, 200) ?? ""} />
          </div>
        ) : null}
      </section>

      <section aria-labelledby="unmapped-title" className="space-y-3" id="unmapped">
        <h2 id="unmapped-title" className="text-lg font-semibold">
          Unmapped items
        </h2>
        <p className={muted}>Items of the last 30 days no rule maps: their usage is compared with nothing. Map each, or leave it if no endpoint spends it.</p>
        <UnmappedTable items={d.unmapped} currency={s.currency} path={path} isAdmin={isAdmin} />
      </section>

      {isAdmin && s.kind === "file" ? (
        <section aria-labelledby="import-title" className={`${cardClass} space-y-3`} id="import">
          <h2 id="import-title" className="text-lg font-semibold">
            Import a file
          </h2>
          <p className={muted}>
            For providers without a usage API: their export as CSV or JSON, or a FOCUS export of AWS, Google Cloud or Azure. A file with any bad line is refused
            whole, each bad line named. The same from a shell:{" "}
            <code className="font-mono">npm run ceilings -- usage import {JSON.stringify(s.name)} file.csv</code>
          </p>
          <ImportForm sourceId={s.id} />
        </section>
      ) : null}

      <section aria-labelledby="days-title" className="space-y-3" id="days">
        <h2 id="days-title" className="text-lg font-semibold">
          Pulled days
        </h2>
        <PullsTable pulls={d.pulls} path={path} shownDay={d.raw.day} />
      </section>

      <section aria-labelledby="raw-title" className="space-y-3" id="raw">
        <h2 id="raw-title" className="text-lg font-semibold">
          Raw rows{d.raw.day ? ` of ${d.raw.day}` : ""}
        </h2>
        {raw.day && !day ? (
          <p role="alert" className="text-sm text-red-800 dark:text-red-300">
            That day is not a real date; showing the latest pulled day.
          </p>
        ) : null}
        {d.raw.day === null ? <p className={muted}>Nothing pulled yet.</p> : <RawRowsTable rows={d.raw.rows} currency={s.currency} />}
        <div className="flex flex-wrap gap-2">
          {after !== null && d.raw.day ? (
            <Link href={`${path}?day=${d.raw.day}#raw`} className={secondaryButtonClass} data-testid="raw-first">
              First rows
            </Link>
          ) : null}
          {d.raw.next !== null && d.raw.day ? (
            <Link href={`${path}?day=${d.raw.day}&after=${d.raw.next}#raw`} className={secondaryButtonClass} data-testid="raw-next">
              Next rows
            </Link>
          ) : null}
        </div>
      </section>

      <section aria-labelledby="settings-title" className="space-y-3" id="settings">
        <h2 id="settings-title" className="text-lg font-semibold">
          Settings
        </h2>
        {isAdmin ? (
          <div className={cardClass}>
            <SourceForm
              source={{ id: s.id, version: sourceVersion(s) }}
              initial={{
                name: s.name,
                kind: s.kind,
                location: s.location ?? "",
                credentialRef: s.credentialRef ?? "",
                account: s.account ?? "",
                timeZone: s.timeZone,
                currency: s.currency,
                lookbackDays: String(s.lookbackDays),
                thresholdPercent: basisPointsText(s.thresholdBasisPoints),
                thresholdMoney: moneyInputText(s.thresholdMicros),
                unmappedMoney: moneyInputText(s.unmappedThresholdMicros),
                pullAt: s.pullAt.slice(0, 5),
              }}
            />
          </div>
        ) : (
          <dl className={`${cardClass} grid gap-x-6 gap-y-1 text-sm sm:grid-cols-[max-content_1fr]`}>
            <dt className="text-zinc-600 dark:text-zinc-400">Location</dt>
            <dd className="break-all font-mono">{s.location ?? "none (imported by hand)"}</dd>
            <dt className="text-zinc-600 dark:text-zinc-400">Credential reference</dt>
            <dd className="break-all font-mono">{s.credentialRef ?? "none"}</dd>
            <dt className="text-zinc-600 dark:text-zinc-400">Account</dt>
            <dd className="break-all font-mono">{s.account ?? "none"}</dd>
            <dt className="text-zinc-600 dark:text-zinc-400">Created</dt>
            <dd>
              {s.createdBy}, {formatDateTime(s.createdAt)}
            </dd>
          </dl>
        )}
        {isAdmin ? (
          <DeleteSourceButton
            sourceId={s.id}
            name={s.name}
            description={`Its ${formatCount(d.rules.length)} rules, every pulled day (${formatCount(d.pulls.length)}${d.pulls.length >= 45 ? " or more" : ""}) with its raw rows, and the comparisons made from them are deleted with it. The endpoints it maps show "not reconciled" until another source maps them. Pause it instead to keep its history.`}
          />
        ) : null}
      </section>
    </div>
  );
}
