import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { Money } from "@/components/money";
import { formatCount, formatMoneyText, formatUtc } from "@/lib/format";
import { getRefusal } from "@/lib/refusals";
import type { ReactNode } from "react";
import { HOUR_MS } from "@/lib/time";

export const metadata: Metadata = { title: "Refusal · Ceilings" };
export const dynamic = "force-dynamic";

function Field({ label, children, testId }: { label: string; children: ReactNode; testId?: string }) {
  return (
    <div className="grid grid-cols-3 gap-3 px-4 py-2 text-sm">
      <dt className="font-medium text-zinc-700 dark:text-zinc-300">{label}</dt>
      <dd className="col-span-2 break-all" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

export default async function RefusalPage({ params }: { params: Promise<{ id: string }> }) {
  await requirePageRole("viewer");
  const { id } = await params;
  if (!/^\d{1,15}$/.test(id)) notFound();
  const r = await getRefusal(await getDb(), Number(id));
  if (!r) notFound();
  const around = new URLSearchParams({
    endpoint: r.endpointKey,
    from: new Date(r.at.getTime() - HOUR_MS).toISOString(),
    to: new Date(r.lastAt.getTime() + HOUR_MS).toISOString(),
  });

  return (
    <div className="space-y-6">
      <div>
        <Link href="/refusals" className="text-sm text-sky-700 underline hover:no-underline dark:text-sky-400">
          ← Refusals
        </Link>
        <h1 className="mt-2 text-2xl font-semibold tracking-tight">
          Refusal {r.id}: <span className="font-mono">{r.gate}</span>
        </h1>
        {r.detail ? (
          <p className="text-sm text-zinc-600 dark:text-zinc-400" data-testid="refusal-detail-text">
            {r.detail}
          </p>
        ) : null}
      </div>
      <dl className="divide-y divide-zinc-200 rounded-lg border border-zinc-200 dark:divide-zinc-800 dark:border-zinc-800" data-testid="refusal-detail">
        <Field label="Endpoint">
          {r.endpoint ? (
            <Link href={`/endpoints/${encodeURIComponent(r.endpoint.key)}`} className="font-mono text-sky-700 underline dark:text-sky-400">
              {r.endpoint.key}
            </Link>
          ) : (
            <span className="font-mono">{r.endpointKey} (deleted)</span>
          )}
        </Field>
        <Field label="Ceiling" testId="refusal-ceiling">
          {r.ceiling ? (
            <>
              {r.ceiling.guarantee}{" "}
              <span className="text-zinc-500">
                (ceiling {r.ceiling.id}, its value today: {formatCount(r.ceiling.valueNow)})
              </span>
            </>
          ) : (
            <span className="text-zinc-500">none: the {r.gate} gate refuses before any ceiling is charged</span>
          )}
        </Field>
        {r.budget ? (
          <Field label="Budget" testId="refusal-budget">
            <Link href={`/budgets/${encodeURIComponent(r.budget.key)}`} className="font-mono text-sky-700 underline dark:text-sky-400">
              {r.budget.key}
            </Link>{" "}
            <span className="text-zinc-500">
              (its value today: <Money micros={r.budget.valueNow} currency={r.budget.currency} />)
            </span>
          </Field>
        ) : null}
        <Field label="Amount asked" testId="refusal-amount">
          {formatCount(r.amount)} {r.endpoint?.unit ?? "units"}
        </Field>
        {/* A budget counts money: what it had left is money in its currency, beside the units asked,
            and to the micro, since the refusal turned on it. */}
        <Field label="Remaining at the time" testId="refusal-remaining">
          {r.remaining === null
            ? "not recorded for this gate"
            : r.budget
              ? `${formatMoneyText(r.remaining, r.budget.currency)} of the budget`
              : `${formatCount(r.remaining)} ${r.endpoint?.unit ?? "units"}`}
        </Field>
        <Field label="Caller">{r.caller ? <span className="font-mono">{r.caller}</span> : "none"}</Field>
        <Field label="Destination (canonical)">{r.destination ? <span className="font-mono">{r.destination}</span> : "none"}</Field>
        <Field label="Request id" testId="refusal-request-id">
          {r.requestId ? <span className="font-mono">{r.requestId}</span> : "none"}
        </Field>
        <Field label="First (UTC)">
          <time dateTime={r.at.toISOString()}>{formatUtc(r.at)}</time>
        </Field>
        <Field label="Last (UTC)">
          <time dateTime={r.lastAt.toISOString()}>{formatUtc(r.lastAt)}</time>
        </Field>
        <Field label="Count" testId="refusal-count">
          {r.count > 1 ? `${formatCount(r.count)} identical refusals within 10 seconds, stored as one row` : "1"}
        </Field>
      </dl>
      <p className="text-sm">
        <Link href={`/refusals?${around.toString()}`} className="text-sky-700 underline dark:text-sky-400">
          Refusals of {r.endpointKey} in the hour around this one
        </Link>
        {r.caller ? (
          <>
            {" · "}
            <Link href={`/refusals?${new URLSearchParams({ caller: r.caller }).toString()}`} className="text-sky-700 underline dark:text-sky-400">
              every refusal of this caller
            </Link>
          </>
        ) : null}
      </p>
    </div>
  );
}
